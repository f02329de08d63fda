package io.pintle.bench.stall;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads Pintle's log (its stderr and stdout, in one file), in byte ranges: what was logged while one family ran.
 * An event is a line in the format of Pintle's {@code logback.xml} ({@code HH:mm:ss.SSS LEVEL [thread] logger -
 * message}) and the lines that follow it (a stack trace); text before the first such line is an event of its own,
 * without a level.
 */
final class ServerLog {
    private static final Pattern EVENT = Pattern.compile(
            "^\\d{2}:\\d{2}:\\d{2}\\.\\d{3} (TRACE|DEBUG|INFO|WARN|ERROR)\\s+\\[[^\\]]*\\] (.*)$");
    private static final String NPE = "NullPointerException";
    private static final int SAMPLES = 10;

    private ServerLog() {}

    /**
     * @param warnings events at WARN
     * @param errors events at ERROR
     * @param npes events (at any level) whose text names a {@code NullPointerException}
     * @param samples the WARN and ERROR events' first lines (without time and thread), each with its count; the
     *     first {@value #SAMPLES} distinct ones
     */
    record Counts(long warnings, long errors, long npes, Map<String, Long> samples) {
        static final Counts NONE = new Counts(0, 0, 0, Map.of());

        long warningsAndErrors() {
            return warnings + errors;
        }
    }

    /** @return the log's length now, in bytes */
    static long size(Path log) throws IOException {
        return Files.size(log);
    }

    /**
     * @param log the log file
     * @param from where to start (a value of {@link #size} taken earlier)
     * @param to where to stop (likewise; the whole file with {@link Long#MAX_VALUE})
     * @return what the range holds
     */
    static Counts scan(Path log, long from, long to) throws IOException {
        try (FileChannel channel = FileChannel.open(log)) {
            long end = Math.min(to, channel.size());
            channel.position(Math.min(from, end));
            // Read line by line: the whole log can be large when something logs on every request.
            InputStream range = new BufferedInputStream(Channels.newInputStream(channel), 64 * 1024) {
                private long left = end - Math.min(from, end);

                @Override
                public synchronized int read() throws IOException {
                    if (left <= 0) {
                        return -1;
                    }
                    int b = super.read();
                    if (b >= 0) {
                        left--;
                    }
                    return b;
                }

                @Override
                public synchronized int read(byte[] buffer, int offset, int length) throws IOException {
                    if (left <= 0) {
                        return -1;
                    }
                    int read = super.read(buffer, offset, (int) Math.min(length, left));
                    if (read > 0) {
                        left -= read;
                    }
                    return read;
                }
            };
            return count(new BufferedReader(new InputStreamReader(range, StandardCharsets.UTF_8)));
        }
    }

    private static Counts count(BufferedReader lines) throws IOException {
        long warnings = 0;
        long errors = 0;
        long npes = 0;
        Map<String, Long> samples = new LinkedHashMap<>();
        String level = null;
        boolean npe = false;
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            Matcher event = EVENT.matcher(line);
            if (event.matches()) {
                if (npe) {
                    npes++;
                }
                level = event.group(1);
                npe = line.contains(NPE);
                if (level.equals("WARN") || level.equals("ERROR")) {
                    if (level.equals("WARN")) {
                        warnings++;
                    } else {
                        errors++;
                    }
                    String text = level + " " + event.group(2);
                    if (samples.containsKey(text) || samples.size() < SAMPLES) {
                        samples.merge(text, 1L, Long::sum);
                    }
                }
            } else if (line.contains(NPE)) {
                npe = true;
            }
        }
        if (npe) {
            npes++;
        }
        return new Counts(warnings, errors, npes, samples);
    }
}
