package io.pintle.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Locale;
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
}
