package io.pintle.server.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.server.logging.WholeLines;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The access log's line, for every door: written through the SLF4J logger {@value #LOGGER}, in Apache's common log
 * format or as JSON ({@code [log] access_format}). One instance per writer, for its cache of the formatted second.
 * When the logger's only appender is Pintle's {@code cli.AccessLogAppender} with a {@code %msg%n} pattern (the
 * shipped {@code logback.xml}), the line is handed to it whole ({@link WholeLines}), without a Logback event: the
 * same bytes, for less CPU ({@code bench/accessline}).
 */
public final class AccessLine {
    /** The access log's logger: route it with Logback (its own appender, file or level). */
    public static final String LOGGER = "io.pintle.access";

    private static final Logger ACCESS = LoggerFactory.getLogger(LOGGER);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final DateTimeFormatter COMMON_TIME =
            DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.US).withZone(ZoneOffset.UTC);

    /** The last second the common form formatted. */
    private volatile Stamp stamp;
    private final Logger logger;
    /** Bench-only switch ({@code -Dpintle.bench.wholeLines=false}): every line through Logback's event, as before. */
    private final boolean wholeLines = !"false".equals(System.getProperty("pintle.bench.wholeLines"));

    /** Writes through the access log's logger, {@value #LOGGER}. */
    public AccessLine() {
        this(ACCESS);
    }

    /** @param logger where lines go (tests give a logger of their own Logback context) */
    public AccessLine(Logger logger) {
        this.logger = logger;
    }

    /** @return whether the logger writes lines at all (Logback's level) */
    public static boolean enabled() {
        return ACCESS.isInfoEnabled();
    }

    /**
     * @param line the entry
     * @param millis its time
     * @param nanos how long the request took
     * @param json the JSON form, else the common one
     */
    public void write(Line line, long millis, long nanos, boolean json) {
        String text = json ? json(line) : common(line, millis, nanos);
        WholeLines whole = wholeLines ? WholeLines.route(logger) : null;
        if (whole != null && logger.isInfoEnabled()) {
            whole.appendWhole(text);
        } else {
            logger.info(text);
        }
    }

    /**
     * Apache's common log format (client, identity, node id as the user, time, request line, status, bytes), then
     * duration, decision, the trust mode that vouched for the certificate ({@code auth=}) and, when there are, the
     * incident id, the door's protocol ({@code proto=}) and the CFEngine key ({@code key=}).
     */
    private String common(Line line, long millis, long nanos) {
        StringBuilder text = new StringBuilder(200);
        text.append(line.client()).append(" - ").append(line.node() != null ? line.node() : "-")
                .append(" [").append(commonTime(millis)).append("] \"");
        quoted(text, line.method());
        text.append(' ');
        quoted(text, line.path() != null ? line.path() : "-");
        if (line.query() != null) {
            text.append('?');
            quoted(text, line.query());
        }
        text.append(' ').append(line.protocol()).append("\" ").append(line.status()).append(' ')
                .append(line.bytes() > 0 ? Long.toString(line.bytes()) : "-").append(' ');
        milliseconds(text, nanos);
        text.append("ms ");
        if (line.decision() == null) {
            text.append('-');
        } else if (line.reason() != null) {
            text.append(line.decision()).append(':').append(line.reason());
        } else {
            text.append(line.decision()).append(" \"");
            quoted(text, line.rule());
            text.append('"');
        }
        if (line.auth() != null) {
            text.append(" auth=").append(line.auth());
        }
        if (line.incident() != null) {
            text.append(" incident=").append(line.incident());
        }
        if (line.proto() != null) {
            text.append(" proto=").append(line.proto());
        }
        if (line.key() != null) {
            text.append(" key=").append(line.key());
        }
        return text.toString();
    }

    /**
     * @param millis a request's time
     * @return its second as the common log format writes it, formatted once per second (a formatter's call
     *     costs more than the rest of the line)
     */
    private String commonTime(long millis) {
        long second = Math.floorDiv(millis, 1000);
        Stamp last = stamp;
        if (last == null || last.second() != second) {
            last = new Stamp(second, COMMON_TIME.format(Instant.ofEpochSecond(second)));
            stamp = last;
        }
        return last.text();
    }

    /** A duration in milliseconds with three decimals, as {@code %.3f} writes it but without a formatter. */
    public static void milliseconds(StringBuilder text, long nanos) {
        long micros = (Math.max(nanos, 0) + 500) / 1000;
        long fraction = micros % 1000;
        text.append(micros / 1000).append('.');
        if (fraction < 100) {
            text.append('0');
        }
        if (fraction < 10) {
            text.append('0');
        }
        text.append(fraction);
    }

    /** The common log format's time of one second; a race only formats twice. */
    private record Stamp(long second, String text) {}

    /**
     * Request lines come from the network: quotes, backslashes and control characters are escaped.
     *
     * @param text where to append
     * @param value what to append, or null for {@code -}
     */
    public static void quoted(StringBuilder text, String value) {
        if (value == null) {
            text.append('-');
            return;
        }
        int length = value.length();
        int first = 0;
        while (first < length && printable(value.charAt(first))) {
            first++;
        }
        if (first == length) {
            text.append(value); // most values need no escape: one copy, not a character at a time
            return;
        }
        text.append(value, 0, first);
        for (int i = first; i < length; i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                text.append('\\').append(c);
            } else if (c < 0x20 || c == 0x7f) {
                text.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
            } else {
                text.append(c);
            }
        }
    }

    private static boolean printable(char c) {
        return c >= 0x20 && c != '"' && c != '\\' && c != 0x7f;
    }

    private static String json(Line line) {
        try {
            return JSON.writeValueAsString(line);
        } catch (JsonProcessingException e) {
            return "{\"error\":\"access line not serialisable\"}";
        }
    }

    /**
     * One access log entry; null fields are left out of the JSON form.
     *
     * @param proto the door when it is not HTTP ({@code cfengine}), or null
     * @param key the CFEngine key's digest ({@code MD5=...}), or null
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Line(
            String time,
            String client,
            String node,
            String method,
            String path,
            String query,
            String protocol,
            int status,
            long bytes,
            @JsonProperty("duration_ms") double durationMs,
            String listener,
            String route,
            String decision,
            String reason,
            String rule,
            String incident,
            String auth,
            String proto,
            String key) {}
}
