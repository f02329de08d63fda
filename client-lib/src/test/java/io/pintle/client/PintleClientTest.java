package io.pintle.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PintleClientTest {
    @Test
    void aFileNameIsOnePercentEncodedSegment() {
        // A report's name as rudder-agent makes it: ':' '+' '@' are encoded, as every byte but the unreserved ones.
        assertThat(PintleClient.encodeSegment("2026-12-06T10:00:00+00:00@node-x.log.gz"))
                .isEqualTo("2026-12-06T10%3A00%3A00%2B00%3A00%40node-x.log.gz");
        assertThat(PintleClient.encodeSegment("a b/é~")).isEqualTo("a%20b%2F%C3%A9~");
    }
}
