package io.pintle.bench.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class PerCoreRowsTest {
    @Test
    void pastTheServersRateTheIdealOrderStillQueuesAgentsBehindEarlierOnes() {
        // 2,000 agents over 10 s (one every 5 ms), 11 ms of CPU per update: agent i is done at (i + 1) × 11 ms, so
        // it waits 6 i + 11 ms; the median agent (i = 1000) 6,011 ms: docs/BENCHMARKS.md's "about 6 s".
        assertThat(PerCoreRows.idealP50Millis(2000, 10_000, 11)).isCloseTo(6011, within(1e-6));
    }

    @Test
    void belowTheServersRateAnUpdateTakesItsOwnCpuOnly() {
        assertThat(PerCoreRows.idealP50Millis(500, 10_000, 11)).isCloseTo(11, within(1e-6));
    }
}
