package io.pintle.server.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.testing.Hammer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BoundedTest {
    @Test
    void anAdditionPastTheCeilingIsRefusedAndChangesNothing() {
        Bounded bounded = new Bounded(10);
        assertThat(bounded.addIfRoom(7)).isEqualTo(7);
        assertThat(bounded.addIfRoom(4)).isEqualTo(-1);
        assertThat(bounded.get()).isEqualTo(7);
        assertThat(bounded.addIfRoom(3)).isEqualTo(10);
        assertThat(bounded.tryIncrement()).isFalse();
        bounded.subtract(10);
        assertThat(bounded.tryIncrement()).isTrue();
        assertThatThrownBy(() -> bounded.subtract(2)).isInstanceOf(IllegalStateException.class);
    }

    /**
     * A refusal never shows as a full count to another thread. Each thread holds at most one of as many slots as
     * there are threads, so its own claim always fits; between claims, each also asks for more than the ceiling,
     * which is always refused. Were a refusal an addition taken back afterwards, the others would now and then
     * see the count full and be refused a slot that was free.
     */
    @Test
    void aRefusalNeverMakesTheCountLookFullToOthers() throws Exception {
        int threads = 8;
        Bounded bounded = new Bounded(threads);
        Hammer.run(threads, 100_000, Duration.ofSeconds(60), (thread, iteration) -> {
            assertThat(bounded.tryIncrement()).as("a claim while a slot is free").isTrue();
            assertThat(bounded.addIfRoom(threads + 1)).isEqualTo(-1);
            bounded.decrement();
            assertThat(bounded.addIfRoom(threads + 1)).isEqualTo(-1);
        });
        assertThat(bounded.get()).isZero();
    }
}
