package io.pintle.server.testing;

import io.pintle.server.threads.Threads;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The scheduler and worker pool a component under test is handed, as {@code Bootstrap} hands them in production:
 * made with the test instance, stopped after the test's own {@code @AfterEach} (which closes the component).
 *
 * <pre>{@code @RegisterExtension final TestThreads threads = new TestThreads();}</pre>
 *
 * Declared before the fields that use it, so that their initialisers can.
 */
public final class TestThreads implements AfterEachCallback {
    private final Threads threads = new Threads();

    /** @return the scheduler */
    public ScheduledExecutorService scheduler() {
        return threads.scheduler();
    }

    /** @return the worker pool */
    public ExecutorService workers() {
        return threads.workers();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        // No grace: whatever a test left scheduled is of no interest once it ended.
        threads.scheduler().shutdownNow();
        threads.workers().shutdownNow();
    }
}
