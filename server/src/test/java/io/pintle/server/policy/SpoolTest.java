package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpoolTest {
    @Test
    void smallContentStaysInTheHeapAndReadsBackWhole(@TempDir Path dir) throws Exception {
        Spool spool = new Spool(dir, 1 << 20);
        byte[] content = random(10_000, 1);
        spool.write(content, 0, 4000);
        spool.write(content[4000]);
        spool.write(content, 4001, content.length - 4001);
        spool.close();
        assertThat(spool.spilled()).isFalse();
        assertThat(spool.size()).isEqualTo(content.length);
        assertThat(read(spool)).isEqualTo(content);
        assertThat(spool.open().readAllBytes()).isEqualTo(content);
        assertThatThrownBy(() -> spool.write(1)).isInstanceOf(IllegalStateException.class);
        spool.release();
    }

    @Test
    void largeContentGoesToAFileThatNoDirectoryListsAndIsFreedByTheLastRelease(@TempDir Path dir) throws Exception {
        Spool spool = new Spool(dir, 8L << 20);
        byte[] content = random(Spool.MEMORY_BYTES * 3 + 12_345, 2);
        for (int offset = 0; offset < content.length; offset += 7_777) {
            spool.write(content, offset, Math.min(7_777, content.length - offset));
        }
        spool.close();
        assertThat(spool.spilled()).isTrue();
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left).isEmpty(); // unlinked as soon as it was open
        }
        assertThat(read(spool)).isEqualTo(content);
        InputStream reader = spool.open();
        assertThat(reader.readNBytes(100)).isEqualTo(java.util.Arrays.copyOf(content, 100));
        assertThat(spool.retain()).isTrue();
        spool.release();
        assertThat(spool.open().readAllBytes()).isEqualTo(content); // still held once
        spool.release();
        assertThat(spool.references()).isZero();
        assertThat(spool.retain()).isFalse();
        assertThatThrownBy(reader::readAllBytes).isInstanceOf(ClosedChannelException.class);
        assertThatThrownBy(spool::release).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aWritePastTheBoundFailsAndKeepsNothingOnDisk(@TempDir Path dir) throws Exception {
        Spool spool = new Spool(dir, Spool.MEMORY_BYTES + 100L);
        spool.write(new byte[Spool.MEMORY_BYTES]);
        spool.write(new byte[100]);
        assertThatThrownBy(() -> spool.write(1)).isInstanceOf(Spool.TooLargeException.class)
                .hasMessage("more than " + (Spool.MEMORY_BYTES + 100) + " bytes");
        assertThat(spool.size()).isEqualTo(Spool.MEMORY_BYTES + 100L);
        spool.release();
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left).isEmpty();
        }
    }

    /**
     * Many threads each take a reference, read the whole file and give it back, while the maker gives its own back
     * part-way: every read is whole and the file is freed exactly once, after the last.
     */
    @Test
    void readersOnManyThreadsEachReadItWholeAndTheLastReleaseFreesIt(@TempDir Path dir) throws Exception {
        byte[] content = random(Spool.MEMORY_BYTES + 300_000, 3);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            for (int round = 0; round < 20; round++) {
                Spool spool = new Spool(dir, 4L << 20);
                spool.write(content);
                spool.close();
                CountDownLatch start = new CountDownLatch(1);
                List<Future<byte[]>> reads = new ArrayList<>();
                for (int reader = 0; reader < 8; reader++) {
                    assertThat(spool.retain()).isTrue();
                    reads.add(pool.submit(() -> {
                        start.await();
                        try {
                            return read(spool);
                        } finally {
                            spool.release();
                        }
                    }));
                }
                start.countDown();
                spool.release();
                for (Future<byte[]> read : reads) {
                    assertThat(read.get(30, TimeUnit.SECONDS)).isEqualTo(content);
                }
                assertThat(spool.references()).isZero();
                assertThat(spool.retain()).isFalse();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static byte[] read(Spool spool) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        spool.writeTo(out);
        return out.toByteArray();
    }

    private static byte[] random(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }
}
