package io.pintle.server.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one directory watch: registration per client, shared directories, filters, debounce, replaced directories. */
class DirectoryWatchTest {
    /** How long a test waits for a notification that must come; never reached when all is well. */
    private static final long DEADLINE_SECONDS = 20;

    @TempDir
    Path dir;

    final DirectoryWatch watch = new DirectoryWatch();

    @BeforeEach
    void start() throws IOException {
        watch.start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        watch.close();
    }

    @Test
    void aClientIsToldOfTheEntriesItCaresAboutInItsDirectories() throws Exception {
        Recorder recorder = new Recorder(entry -> entry.getFileName().toString().endsWith(".json"));
        DirectoryWatch.Client client = watch.client("test", DirectoryWatch.Debounce.NONE, recorder);
        client.watch(dir);
        Files.writeString(dir.resolve("ignored.tmp"), "x");
        Files.writeString(dir.resolve("nodeslist.json"), "{}");

        List<DirectoryWatch.Change> changes = recorder.next();
        assertThat(changes).singleElement().satisfies(change -> {
            assertThat(change.directory()).isEqualTo(dir);
            assertThat(change.entries()).containsExactly(dir.resolve("nodeslist.json"));
            assertThat(change.overflow()).isFalse();
        });
        assertThat(client.directories()).containsExactly(dir);
    }

    @Test
    void twoClientsOfOneDirectoryAreBothToldUntilOneLetsGo() throws Exception {
        Recorder first = new Recorder(entry -> true);
        Recorder second = new Recorder(entry -> true);
        DirectoryWatch.Client a = watch.client("first", DirectoryWatch.Debounce.NONE, first);
        DirectoryWatch.Client b = watch.client("second", DirectoryWatch.Debounce.NONE, second);
        a.watch(dir);
        b.watch(dir);
        Files.writeString(dir.resolve("one"), "1");
        first.awaitEntry(dir.resolve("one"));
        second.awaitEntry(dir.resolve("one"));

        a.unwatch(dir);
        Files.writeString(dir.resolve("two"), "2");
        second.awaitEntry(dir.resolve("two"));
        // Both would be told in the same turn of the watch thread, the first client first: it was not.
        assertThat(first.changes).allSatisfy(batch -> assertThat(batch)
                .noneSatisfy(change -> assertThat(change.entries()).contains(dir.resolve("two"))));
    }

    @Test
    void aBurstIsOneNotificationOnceQuiet() throws Exception {
        Recorder recorder = new Recorder(entry -> true);
        // A quiet period far longer than the time between these writes, so that they are one burst.
        watch.client("test", new DirectoryWatch.Debounce(Duration.ofSeconds(1), Duration.ofSeconds(10)), recorder)
                .watch(dir);
        for (int i = 0; i < 5; i++) {
            Files.writeString(dir.resolve("file-" + i), "x");
        }
        List<DirectoryWatch.Change> changes = recorder.next();
        assertThat(changes).singleElement().satisfies(change -> assertThat(change.entries()).containsExactlyInAnyOrder(
                dir.resolve("file-0"), dir.resolve("file-1"), dir.resolve("file-2"), dir.resolve("file-3"),
                dir.resolve("file-4")));
    }

    @Test
    void aBurstThatNeverPausesIsToldAfterTheMaximumDelay() throws Exception {
        Recorder recorder = new Recorder(entry -> true);
        // Quiet is never reached while the writes go on (one every 10 ms); only the maximum delay ends a batch.
        watch.client("test", new DirectoryWatch.Debounce(Duration.ofMillis(300), Duration.ofMillis(300)), recorder)
                .watch(dir);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_SECONDS);
        int written = 0;
        while (recorder.changes.isEmpty()) {
            assertThat(System.nanoTime()).as("no notification while the burst goes on").isLessThan(deadline);
            Files.writeString(dir.resolve("busy"), Integer.toString(written++));
            Thread.sleep(10); // the burst under test: a write every 10 ms, never the 300 ms of quiet
        }
        assertThat(recorder.next().get(0).entries()).containsExactly(dir.resolve("busy"));
    }

    @Test
    void aDirectoryReplacedByAnotherOfTheSameNameIsWatchedAgain() throws Exception {
        Path watched = Files.createDirectory(dir.resolve("tree"));
        Recorder recorder = new Recorder(entry -> entry.getFileName().toString().equals("after"));
        DirectoryWatch.Client client = watch.client("test", DirectoryWatch.Debounce.NONE, recorder);
        client.watch(watched);
        Files.delete(watched);
        Files.createDirectory(watched);
        client.watch(watched);
        Files.writeString(watched.resolve("after"), "x");
        assertThat(recorder.next().get(0).entries()).containsExactly(watched.resolve("after"));
    }

    @Test
    void aFailingClientDoesNotStopTheOthers() throws Exception {
        DirectoryWatch.Client failing = watch.client("failing", DirectoryWatch.Debounce.NONE, changes -> {
            throw new IllegalStateException("test failure");
        });
        Recorder recorder = new Recorder(entry -> true);
        DirectoryWatch.Client healthy = watch.client("healthy", DirectoryWatch.Debounce.NONE, recorder);
        failing.watch(dir);
        healthy.watch(dir);
        Files.writeString(dir.resolve("one"), "1");
        recorder.awaitEntry(dir.resolve("one"));
        Files.writeString(dir.resolve("two"), "2");
        recorder.awaitEntry(dir.resolve("two"));
    }

    @Test
    void watchingNeedsTheWatchStartedAndAnExistingDirectory() throws InterruptedException {
        DirectoryWatch.Client client = watch.client("test", DirectoryWatch.Debounce.NONE, new Recorder(entry -> true));
        assertThatThrownBy(() -> client.watch(dir.resolve("missing"))).isInstanceOf(IOException.class);
        assertThat(client.directories()).isEmpty();
        watch.close();
        assertThatThrownBy(() -> client.watch(dir)).isInstanceOf(IOException.class);
        DirectoryWatch notStarted = new DirectoryWatch();
        assertThatThrownBy(() -> notStarted.client("test", DirectoryWatch.Debounce.NONE, new Recorder(entry -> true))
                .watch(dir)).isInstanceOf(IOException.class).hasMessageContaining("not started");
    }

    @Test
    void aDebounceNeedsAQuietPeriodNoLongerThanItsMaximumDelay() {
        assertThatThrownBy(() -> new DirectoryWatch.Debounce(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new DirectoryWatch.Debounce(Duration.ofMillis(-1), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** Keeps every notification, in order. */
    private static final class Recorder implements DirectoryWatch.Listener {
        final BlockingQueue<List<DirectoryWatch.Change>> changes = new LinkedBlockingQueue<>();
        private final Predicate<Path> concerns;

        Recorder(Predicate<Path> concerns) {
            this.concerns = concerns;
        }

        @Override
        public boolean concerns(Path entry) {
            return concerns.test(entry);
        }

        @Override
        public void changed(List<DirectoryWatch.Change> batch) {
            changes.add(batch);
        }

        List<DirectoryWatch.Change> next() throws InterruptedException {
            List<DirectoryWatch.Change> next = changes.poll(DEADLINE_SECONDS, TimeUnit.SECONDS);
            assertThat(next).as("a notification within %d s", DEADLINE_SECONDS).isNotNull();
            return next;
        }

        /** Waits for a notification naming {@code entry}, skipping others. */
        void awaitEntry(Path entry) throws InterruptedException {
            while (true) {
                for (DirectoryWatch.Change change : next()) {
                    if (change.entries().contains(entry)) {
                        return;
                    }
                }
            }
        }
    }
}
