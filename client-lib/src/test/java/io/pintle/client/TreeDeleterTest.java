package io.pintle.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TreeDeleterTest {
    @Test
    void everythingHandedOverIsGoneWhenCloseReturns(@TempDir Path dir) throws Exception {
        List<Path> aside = new ArrayList<>();
        try (TreeDeleter deleter = new TreeDeleter()) {
            for (int i = 0; i < 3 * 64; i++) {
                Path tree = dir.resolve(".node-" + i + ".pintle-staging-" + i);
                Files.createDirectories(tree.resolve("rules/cfengine-community"));
                Files.writeString(tree.resolve("rules/cfengine-community/promises.cf"), "bundle " + i);
                Files.write(tree.resolve("rules/rudder.tar.bz2"), new byte[4096]);
                Path retired = Files.writeString(dir.resolve(".node-" + i + ".pintle-sync.json.retired"), "{}");
                aside.add(tree);
                aside.add(retired);
                deleter.delete(List.of(retired, tree));
            }
        }
        assertThat(aside).allSatisfy(path -> assertThat(path).doesNotExist());
        try (var left = Files.list(dir)) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void inOrderOnItsOwnThreadAndOnTheSyncThreadWhenTooManyWait(@TempDir Path dir) throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        Map<Path, String> deletedBy = new ConcurrentHashMap<>();
        List<Path> order = new CopyOnWriteArrayList<>();
        TreeDeleter deleter = new TreeDeleter(tree -> {
            deletedBy.put(tree, Thread.currentThread().getName());
            order.add(tree);
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
            deleter.delete(List.of(dir.resolve("first")));
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            deleter.delete(List.of(dir.resolve("second.retired"), dir.resolve("second")));
            deleter.delete(List.of(dir.resolve("third")));
            // "first" is being deleted, "second" and "third" wait: "fourth" finds no room and is deleted here.
            deleter.delete(List.of(dir.resolve("fourth")));
            assertThat(deletedBy).containsOnlyKeys(dir.resolve("first"), dir.resolve("fourth"));
            assertThat(deletedBy.get(dir.resolve("fourth"))).isEqualTo(Thread.currentThread().getName());
        } finally {
            go.countDown();
            deleter.close();
        }
        assertThat(order).containsExactly(dir.resolve("first"), dir.resolve("fourth"), dir.resolve("second.retired"),
                dir.resolve("second"), dir.resolve("third"));
        assertThat(deletedBy.get(dir.resolve("second"))).isEqualTo("pintle-tree-delete");
        assertThat(deletedBy.get(dir.resolve("first"))).isEqualTo("pintle-tree-delete");
    }
}
