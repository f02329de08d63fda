package io.pintle.server.cli;

import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.UnsynchronizedAppenderBase;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.pattern.PatternLayoutBase;
import io.pintle.server.logging.WholeLines;
import io.pintle.server.overload.Bounded;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The access log's appender: each line is encoded on the request's thread and queued without waking anyone; one
 * writer thread wakes every {@code flushMillis} (50 ms by default, or when the queue is half full) and writes
 * what was queued to stderr in a few writes (whole lines, up to 4 KiB each). Logback's {@code AsyncAppender} in front of a {@code ConsoleAppender}
 * woke its worker for every line and wrote every line with its own system call: with the server on one core that
 * cost more than half of its keep-alive small-file rate (issue 23, {@code bench/perf}). As nginx's {@code
 * access_log ... buffer= flush=}, a line reaches stderr at most {@code flushMillis} late.
 *
 * <p>No request waits for stderr (or a slow journald): the queue is bounded ({@code queueSize} lines, 16,384 by
 * default), and when it is full lines are dropped and counted, and the count is written as a line of its own. At
 * stop (Logback's, at exit: {@link Logging#flush}) what is queued is written; stderr itself is never closed.
 *
 * <p>When this appender is its logger's only one (additivity off, no filters anywhere on the way) and its encoder
 * writes the message alone ({@code %msg%n}), the access line is handed to it whole ({@link WholeLines}): the same
 * bytes, without Logback's event, filter chain and pattern layout (~0.1 µs of a line's 0.3–0.5 µs of CPU, {@code
 * bench/accessline}). Any other routing (another pattern, a second appender, a filter) goes through Logback.
 *
 * <p>In {@code logback.xml}: {@code <appender class="io.pintle.server.cli.AccessLogAppender">} with an
 * {@code <encoder>}, optionally {@code <queueSize>} and {@code <flushMillis>}.
 */
public final class AccessLogAppender extends UnsynchronizedAppenderBase<ILoggingEvent> implements WholeLines {
    private final OutputStream target;
    private final Queue<byte[]> queue = new ConcurrentLinkedQueue<>();
    /** Lines in {@link #queue}, bounded by {@link #queueSize}; made at start, when the size is known. */
    private volatile Bounded queued;
    private final AtomicLong dropped = new AtomicLong();
    private Encoder<ILoggingEvent> encoder;
    private int queueSize = 16_384;
    private long flushMillis = 50;
    private volatile boolean running;
    private Thread writer;
    /** The charset of an encoder that writes the message alone, set at start; null for any other encoder. */
    private volatile Charset plain;
    /** Whether a filter was ever added: then every line goes through Logback's filter chain. */
    private volatile boolean filtered;

    /** The patterns that write the message alone, then a line separator: what {@link #appendWhole} writes. */
    private static final Set<String> PLAIN_PATTERNS = Set.of("%msg%n", "%m%n", "%message%n");
    /** Their conversion words. */
    private static final Set<String> PLAIN_WORDS = Set.of("msg", "m", "message", "n");

    /** Writes to the process's stderr. */
    public AccessLogAppender() {
        this(new FileOutputStream(FileDescriptor.err));
    }

    /** @param target where the lines go (tests); never closed */
    AccessLogAppender(OutputStream target) {
        this.target = target;
    }

    /** @param encoder turns an event into its line */
    public void setEncoder(Encoder<ILoggingEvent> encoder) {
        this.encoder = encoder;
    }

    /** @param queueSize lines held at most before new ones are dropped (at least 16) */
    public void setQueueSize(int queueSize) {
        this.queueSize = queueSize;
    }

    /** @param flushMillis the longest a line waits to be written (10 ms to 10 s) */
    public void setFlushMillis(long flushMillis) {
        this.flushMillis = flushMillis;
    }

    @Override
    public void start() {
        if (encoder == null) {
            addError("no encoder for appender " + name);
            return;
        }
        if (queueSize < 16 || flushMillis < 10 || flushMillis > 10_000) {
            addError("queueSize must be at least 16 and flushMillis between 10 and 10000");
            return;
        }
        queued = new Bounded(queueSize);
        plain = plainCharset(encoder);
        running = true;
        // A thread of its own: Logback makes this appender from logback.xml before any server exists, and it
        // outlives every server in the process; the loop waits for lines and writes them out.
        writer = new Thread(this::writeLoop, "pintle-access-log");
        writer.setDaemon(true);
        writer.start();
        super.start();
    }

    /**
     * @return the charset of an encoder that writes the message alone: Logback's own {@code PatternLayoutEncoder}
     *     (not a subclass) with one of {@link #PLAIN_PATTERNS} exactly, and none of its words redefined by a
     *     {@code <conversionRule>} (a masking converter, say); null for any other
     */
    private Charset plainCharset(Encoder<ILoggingEvent> candidate) {
        if (candidate == null || candidate.getClass() != PatternLayoutEncoder.class) {
            return null;
        }
        PatternLayoutEncoder layout = (PatternLayoutEncoder) candidate;
        if (!PLAIN_PATTERNS.contains(layout.getPattern())) {
            return null;
        }
        for (String registry : List.of(CoreConstants.PATTERN_RULE_REGISTRY,
                CoreConstants.PATTERN_RULE_REGISTRY_FOR_SUPPLIERS)) {
            if (context != null && context.getObject(registry) instanceof Map<?, ?> rules
                    && redefines(rules.keySet())) {
                return null;
            }
        }
        if (layout.getLayout() instanceof PatternLayoutBase<?> base && base.getInstanceConverterMap() != null
                && redefines(base.getInstanceConverterMap().keySet())) {
            return null;
        }
        return layout.getCharset() != null ? layout.getCharset() : Charset.defaultCharset();
    }

    private static boolean redefines(Set<?> words) {
        return words.stream().anyMatch(PLAIN_WORDS::contains);
    }

    @Override
    public void addFilter(Filter<ILoggingEvent> filter) {
        filtered = true;
        super.addFilter(filter);
    }

    @Override
    public boolean takesWholeLines() {
        return isStarted() && plain != null && !filtered;
    }

    @Override
    public void appendWhole(String message) {
        queue(message.concat(CoreConstants.LINE_SEPARATOR).getBytes(plain));
    }

    @Override
    protected void append(ILoggingEvent event) {
        queue(encoder.encode(event));
    }

    private void queue(byte[] line) {
        long count = queued.addIfRoom(1);
        if (count < 0) {
            dropped.incrementAndGet();
            return;
        }
        queue.add(line);
        if (count == queueSize / 2) {
            LockSupport.unpark(writer);
        }
    }

    @Override
    public void stop() {
        if (!isStarted()) {
            return;
        }
        super.stop();
        running = false;
        LockSupport.unpark(writer);
        try {
            writer.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Writes what was queued every pause, and once more after the stop, which wakes it at once. */
    private void writeLoop() {
        LineBatches out = new LineBatches(target);
        long pause = TimeUnit.MILLISECONDS.toNanos(flushMillis);
        while (running) {
            LockSupport.parkNanos(this, pause);
            writeQueued(out);
        }
        writeQueued(out);
    }

    /** Writes what is queued, then the count of lines dropped since the last write, in as few writes as fit. */
    private void writeQueued(LineBatches out) {
        try {
            writeLines(out);
        } catch (IOException e) {
            addError("cannot write the access log", e);
        }
    }

    private void writeLines(LineBatches out) throws IOException {
        int written = 0;
        for (byte[] line = queue.poll(); line != null; line = queue.poll()) {
            out.line(line);
            written++;
        }
        queued.subtract(written);
        long lost = dropped.getAndSet(0);
        if (lost > 0) {
            out.line(("pintle: " + lost + " access log lines dropped, the access log queue was full (" + queueSize
                    + " lines)\n").getBytes(StandardCharsets.UTF_8));
        }
        out.flush();
    }

    /**
     * Whole lines, in writes of at most {@value #WRITE_BYTES} bytes (one longer line alone): stderr is shared with
     * the other log lines, and a write up to that size reaches a pipe in one piece (PIPE_BUF), so no other line
     * lands inside an access line.
     */
    private static final class LineBatches {
        static final int WRITE_BYTES = 4096;
        private final OutputStream target;
        private final byte[] buffer = new byte[WRITE_BYTES];
        private int length;

        LineBatches(OutputStream target) {
            this.target = target;
        }

        void line(byte[] line) throws IOException {
            if (length + line.length > WRITE_BYTES) {
                flush();
            }
            if (line.length > WRITE_BYTES) {
                target.write(line);
                return;
            }
            System.arraycopy(line, 0, buffer, length, line.length);
            length += line.length;
        }

        void flush() throws IOException {
            if (length > 0) {
                target.write(buffer, 0, length);
                length = 0;
            }
            target.flush();
        }
    }
}
