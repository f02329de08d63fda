package io.pintle.server.cfengine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** CFEngine's framing and request paths, as cf-serverd reads and writes them. */
class TransactionTest {
    private static byte[] header(String text) {
        return Arrays.copyOf(text.getBytes(StandardCharsets.US_ASCII), Transaction.HEADER);
    }

    @Test
    void readsTheHeadersCfengineWritesAndNothingElse() {
        assertThat(Transaction.length(header("t 42"))).isEqualTo(42);
        assertThat(Transaction.length(header("m 4088"))).isEqualTo(4088);
        assertThat(Transaction.length(header("t 4089"))).as("past CF_BUFSIZE - 8").isEqualTo(-1);
        assertThat(Transaction.length(header("t 0"))).as("empty payloads are not allowed").isEqualTo(-1);
        assertThat(Transaction.length(header("x 12"))).isEqualTo(-1);
        assertThat(Transaction.length(header("t12"))).isEqualTo(-1);
        assertThat(Transaction.length(header("t 1 2"))).isEqualTo(-1);
        assertThat(Transaction.length("CAUTH 12".getBytes(StandardCharsets.US_ASCII))).isEqualTo(-1);
    }

    @Test
    void writesTheHeaderNulPadded() {
        ByteBuffer done = Transaction.done("CFD_FALSE");
        byte[] bytes = new byte[done.remaining()];
        done.get(bytes);
        assertThat(Arrays.copyOf(bytes, 8)).isEqualTo(header("t 9"));
        assertThat(new String(bytes, 8, 9, StandardCharsets.US_ASCII)).isEqualTo("CFD_FALSE");
    }

    @Test
    void normalisesRequestPathsAndRefusesEscapes() {
        assertThat(RequestPath.normalise("/var/rudder//share/./n1/")).isEqualTo("/var/rudder/share/n1");
        assertThat(RequestPath.normalise("/")).isEqualTo("/");
        assertThat(RequestPath.normalise("/var/rudder/share/n1/../n2")).isNull();
        assertThat(RequestPath.normalise("var/rudder")).isNull();
        assertThat(RequestPath.normalise("")).isNull();
        assertThat(RequestPath.normalise("/a\0b")).isNull();
        assertThat(RequestPath.normalise("/" + "a".repeat(RequestPath.MAX_LENGTH))).isNull();
        assertThat(RequestPath.refusal("var")).contains("relative");
        assertThat(RequestPath.refusal("/a/../b")).contains("..");
    }
}
