package io.pintle.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TreeDeleterTest {
    @Test
    void everyTreeHandedOverIsGoneAndItsLockReleasedWhenCloseReturns(@TempDir Path dir) throws Exception {
        List<Path> trees = new ArrayList<>();
        List<FileChannel> locks = new ArrayList<>();
        try (TreeDeleter deleter = new TreeDeleter()) {
            for (int i = 0; i < 3 * TreeDeleter.WAITING; i++) {
                Path tree = dir.resolve(".node-" + i + ".pintle-staging-" + i);
                Files.createDirectories(tree.resolve("rules/cfengine-community"));
                Files.writeString(tree.resolve("rules/cfengine-community/promises.cf"), "bundle " + i);
                Files.write(tree.resolve("rules/rudder.tar.bz2"), new byte[4096]);
                FileChannel lock = FileChannel.open(dir.resolve(".node-" + i + ".pintle-sync.lock"),
                        StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                lock.lock();
                Path retired = Files.writeString(dir.resolve(".node-" + i + ".pintle-sync.json.retired"), "{}");
                trees.add(tree);
                trees.add(retired);
                locks.add(lock);
                deleter.delete(List.of(retired, tree), lock);
            }
        }
        assertThat(trees).allSatisfy(tree -> assertThat(tree).doesNotExist());
        assertThat(locks).noneMatch(FileChannel::isOpen);
        try (var left = Files.list(dir)) {
            assertThat(left.map(path -> path.getFileName().toString()))
                    .noneMatch(name -> name.contains("staging") || name.contains("retired"));
        }
    }

    @Test
    void aLockIsHeldUntilItsTreeIsDeletedAndTheSyncThreadDeletesItselfWhenTooManyWait(@TempDir Path dir)
            throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        Map<Path, String> deletedBy = new ConcurrentHashMap<>();
        List<FileChannel> locks = new ArrayList<>();
        TreeDeleter deleter = new TreeDeleter(tree -> {
            deletedBy.put(tree, Thread.currentThread().getName());
            if (tree.endsWith("first")) {
                started.countDown();
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, 2);
        try {
            for (String name : List.of("first", "second", "third", "fourth")) {
                FileChannel lock = FileChannel.open(dir.resolve(name + ".lock"), StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
                locks.add(lock);
                deleter.delete(List.of(dir.resolve(name)), lock);
                if (name.equals("first")) {
                    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
                }
            }
            // "first" is being deleted, "second" and "third" wait: "fourth" found no room and was deleted here.
            assertThat(deletedBy).containsEntry(dir.resolve("fourth"), Thread.currentThread().getName());
            assertThat(locks.get(3).isOpen()).isFalse();
            assertThat(locks.subList(0, 3)).as("held until their trees are deleted").allMatch(FileChannel::isOpen);
        } finally {
            go.countDown();
            deleter.close();
        }
        assertThat(deletedBy).containsOnlyKeys(dir.resolve("first"), dir.resolve("second"), dir.resolve("third"),
                dir.resolve("fourth"));
        assertThat(deletedBy.get(dir.resolve("second"))).isEqualTo("pintle-tree-delete");
        assertThat(locks).noneMatch(FileChannel::isOpen);
    }
}
