package io.pintle.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Locale;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class AccessLineTest {
    /** The access log's duration, without a formatter, reads as {@code %.3f} of the milliseconds did. */
    @Test
    void durationsReadAsThreeDecimalMilliseconds() {
        long[] nanos = {0, 1, 499, 500, 999, 1_000, 9_999, 10_000, 99_499, 99_500, 123_456, 4_096_499, 43_464_000,
            1_000_000_000L, 12_345_678_901L};
        for (long value : nanos) {
            StringBuilder text = new StringBuilder();
            AccessLine.milliseconds(text, value);
            assertThat(text.toString()).as("%d ns", value)
                    .isEqualTo(String.format(Locale.ROOT, "%.3f", Math.round(value / 1000.0) / 1000.0));
        }
        StringBuilder text = new StringBuilder();
        AccessLine.milliseconds(text, 4_096_499);
        assertThat(text).hasToString("4.096");
        text.setLength(0);
        AccessLine.milliseconds(text, 7_000);
        assertThat(text).hasToString("0.007");
    }

    /** Escaping: quotes and backslashes get a backslash, control characters and DEL {@code \xNN}, the rest as is. */
    @Test
    void quotedEscapesWhatTheNetworkCouldInjectWhereverItStands() {
        String[] values = {"", "/policies/node-1/rules/rudder.tar.bz2", "\"", "a\"b", "end\\", "\u0001start",
            "tab\there", "del\u007f", "caf\u00e9 \u2603", "\"\"\\\n", "x\ry\u001bz"};
        for (String value : values) {
            StringBuilder text = new StringBuilder("[");
            AccessLine.quoted(text, value);
            assertThat(text.toString()).as(value).isEqualTo("[" + escapedOneByOne(value));
        }
        StringBuilder text = new StringBuilder();
        AccessLine.quoted(text, null);
        assertThat(text).hasToString("-");
        text.setLength(0);
        AccessLine.quoted(text, "GET /a\"b\n");
        assertThat(text).hasToString("GET /a\\\"b\\x0a");
    }

    /** The rule, one character at a time. */
    private static String escapedOneByOne(String value) {
        return value.chars().mapToObj(c -> c == '"' || c == '\\' ? "\\" + (char) c
                : c < 0x20 || c == 0x7f ? String.format(Locale.ROOT, "\\x%02x", c) : String.valueOf((char) c))
                .collect(Collectors.joining());
    }
}
