package io.pintle.server.overload;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The {@code Retry-After} of a refused request: the configured delay plus or minus a random jitter, so that
 * clients refused together come back spread out (Puppet Server does the same past its queue, SERVER-1767).
 */
public final class RetryAfter {
    private final long base;
    private final long jitter;

    /**
     * @param base the average delay
     * @param jitter the largest deviation either way; less than {@code base}
     */
    public RetryAfter(Duration base, Duration jitter) {
        this.base = base.toSeconds();
        this.jitter = jitter.toSeconds();
        if (this.jitter < 0 || this.jitter >= this.base) {
            throw new IllegalArgumentException("jitter must be in [0, base): " + jitter + " for " + base);
        }
    }

    /** @return a delay in whole seconds, uniformly in [base - jitter, base + jitter], at least 1 */
    public long nextSeconds() {
        return base - jitter + ThreadLocalRandom.current().nextLong(2 * jitter + 1);
    }
}
