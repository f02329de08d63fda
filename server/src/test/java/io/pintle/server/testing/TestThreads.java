package io.pintle.server.testing;

import io.pintle.server.threads.Threads;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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

    /** How long stopped threads get to end what they were doing (an interrupted copy ends at its file). */
    private static final long STOP_SECONDS = 30;

    @Override
    public void afterEach(ExtensionContext context) throws InterruptedException {
        // No grace for what a test left scheduled: it is of no interest once the test ended. But a task already
        // running is waited for: it may be writing into the test's @TempDir, whose deletion comes next and failed
        // with DirectoryNotEmptyException when a worker's tree copy created a file meanwhile (DeliveryTest, seen
        // under load in CI).
        threads.scheduler().shutdownNow();
        threads.workers().shutdownNow();
        if (!threads.scheduler().awaitTermination(STOP_SECONDS, TimeUnit.SECONDS)
                || !threads.workers().awaitTermination(STOP_SECONDS, TimeUnit.SECONDS)) {
            throw new AssertionError("a task of the test's threads still runs " + STOP_SECONDS
                    + " s after they were stopped (it ignores interrupts)");
        }
    }
}
