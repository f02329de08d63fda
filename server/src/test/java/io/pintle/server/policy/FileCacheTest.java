package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.testing.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link FileCache} on real files: what keeps an entry valid, and what makes it stale. */
class FileCacheTest {
    /** Far enough ahead that every file written by a test has settled. */
    private static final Clock LATER = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(10));

    @TempDir
    Path dir;

    private Path file;
    private FileCache cache;

    @BeforeEach
    void createFile() throws IOException {
        file = dir.resolve("promises.cf");
        Files.writeString(file, "bundle agent a { }\n");
        cache = new FileCache(1024 * 1024, LATER);
    }

    /** What FileHandler does on a miss: stamp, the full path, keep, then the bytes. */
    private FileCache.Entry download(Path path) throws IOException {
        FileCache.Stamp stamp = FileCache.stamp(path);
        FileCache.Entry cached = cache.get(path, stamp);
        if (cached != null) {
            return cached;
        }
        FileVersion version = FileVersion.of(path.toRealPath());
        FileCache.Entry kept = cache.keep(path, stamp, version);
        assertThat(kept).isNotNull();
        return cache.withBody(path, kept, Files.readAllBytes(path));
    }

    private FileCache.Entry lookup(Path path) throws IOException {
        return cache.get(path, FileCache.stamp(path));
    }

    /**
     * Waits for the coarse kernel clock that stamps ctime to move past the file's ctime, so that a change shows in
     * it: a probe file is written until its own ctime, the clock's now, is later.
     */
    private void nextClockTick() throws Exception {
        FileTime stamped = ctime(file);
        Path probe = dir.resolve("clock-probe");
        Await.until(Duration.ofSeconds(5), "the ctime clock moves past " + stamped, () -> {
            Files.writeString(probe, "tick");
            return ctime(probe).compareTo(stamped) > 0;
        });
    }

    private static FileTime ctime(Path path) throws IOException {
        return (FileTime) Files.getAttribute(path, "unix:ctime");
    }

    @Test
    void anUnchangedFileIsAnsweredFromItsEntryWithItsBytes() throws IOException {
        FileCache.Entry first = download(file);

        FileCache.Entry second = lookup(file);

        assertThat(second).isSameAs(first);
        assertThat(new String(second.body(), StandardCharsets.UTF_8)).isEqualTo("bundle agent a { }\n");
        assertThat(second.version()).isEqualTo(FileVersion.of(file));
        assertThat(cache.hits()).isEqualTo(1);
        assertThat(cache.misses()).isEqualTo(1);
        assertThat(cache.size()).isEqualTo(FileCache.ENTRY_OVERHEAD + first.body().length);
    }

    @Test
    void aFileReplacedByARenameIsStale() throws Exception {
        download(file);
        Path fresh = Files.writeString(dir.resolve("promises.cf.new"), "bundle agent b { }\n");
        Files.setLastModifiedTime(fresh, Files.getLastModifiedTime(file));
        Files.move(fresh, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);

        assertThat(lookup(file)).isNull();
        assertThat(cache.entries()).isZero();
        assertThat(new String(download(file).body(), StandardCharsets.UTF_8)).isEqualTo("bundle agent b { }\n");
    }

    @Test
    void aFileRewrittenInPlaceWithItsSizeAndTimeRestoredIsStale() throws Exception {
        FileTime modified = Files.getLastModifiedTime(file);
        download(file);
        nextClockTick();
        // Same inode, same size, same mtime: only the ctime tells.
        Files.writeString(file, "bundle agent z { }\n", StandardOpenOption.TRUNCATE_EXISTING);
        Files.setLastModifiedTime(file, modified);

        assertThat(lookup(file)).isNull();
        assertThat(new String(download(file).body(), StandardCharsets.UTF_8)).isEqualTo("bundle agent z { }\n");
    }

    @Test
    void aFileRenamedAwayAndBackIsStale() throws Exception {
        download(file);
        nextClockTick();
        Path away = dir.resolve("elsewhere.cf");
        Files.move(file, away);
        Files.move(away, file);

        assertThat(lookup(file)).isNull();
    }

    @Test
    void aLinkPutInPlaceOfTheFileIsNotARegularFile() throws Exception {
        download(file);
        Path secret = Files.writeString(dir.resolve("secret"), "not served");
        Files.delete(file);
        Files.createSymbolicLink(file, secret);

        FileCache.Stamp stamp = FileCache.stamp(file);

        assertThat(stamp.regular()).isFalse();
        assertThat(cache.get(file, stamp)).isNull();
    }

    @Test
    void aRemovedFileHasNoStamp() throws IOException {
        download(file);
        Files.delete(file);

        assertThatThrownBy(() -> FileCache.stamp(file)).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void bytesAreKeptOnlyOnceTheFileHasSettled() throws IOException {
        FileCache now = new FileCache(1024 * 1024, Clock.systemUTC());
        FileCache.Stamp stamp = FileCache.stamp(file);
        FileCache.Entry kept = now.keep(file, stamp, FileVersion.of(file));

        FileCache.Entry withBody = now.withBody(file, kept, Files.readAllBytes(file));

        // Written a moment ago: a write within the same clock tick would not show in its times.
        assertThat(withBody.body()).isNull();
        assertThat(now.get(file, stamp)).isSameAs(kept);
        FileCache later = new FileCache(1024 * 1024,
                Clock.fixed(Instant.now().plus(FileCache.SETTLED).plusSeconds(1), java.time.ZoneOffset.UTC));
        assertThat(later.withBody(file, later.keep(file, stamp, FileVersion.of(file)), Files.readAllBytes(file))
                .body()).isNotNull();
    }

    @Test
    void bytesReadWhileTheFileChangedAreNotKept() throws Exception {
        FileCache.Stamp stamp = FileCache.stamp(file);
        FileCache.Entry kept = cache.keep(file, stamp, FileVersion.of(file));
        byte[] read = Files.readAllBytes(file);
        nextClockTick();
        Files.writeString(file, "bundle agent c { }\n", StandardOpenOption.TRUNCATE_EXISTING);

        FileCache.Entry result = cache.withBody(file, kept, read);

        assertThat(result.body()).isNull();
        assertThat(cache.entries()).isZero();
    }

    @Test
    void aVersionOfAnotherFileIsNotKept() throws IOException {
        Path other = Files.writeString(dir.resolve("other.cf"), "bundle agent a { }\n");

        assertThat(cache.keep(file, FileCache.stamp(file), FileVersion.of(other))).isNull();
        assertThat(cache.keep(dir, FileCache.stamp(dir), FileVersion.of(dir))).isNull();
    }

    @Test
    void largeFilesKeepTheirVersionButNotTheirBytes() throws IOException {
        Path large = dir.resolve("large.bin");
        Files.write(large, new byte[FileCache.MAX_BODY_BYTES + 1]);

        FileCache.Entry entry = download(large);

        assertThat(entry.body()).isNull();
        assertThat(lookup(large)).isSameAs(entry);
    }

    @Test
    void theBudgetIsNeverExceeded() throws IOException {
        long budget = 10L * (FileCache.ENTRY_OVERHEAD + 1000);
        cache = new FileCache(budget, LATER);
        for (int i = 0; i < 100; i++) {
            download(Files.write(dir.resolve("f" + i), new byte[1000]));
            assertThat(cache.size()).isLessThanOrEqualTo(budget);
        }
        assertThat(cache.entries()).isBetween(1, 10);
        assertThat(cache.size()).isGreaterThan(0);
    }

    @Test
    void aZeroBudgetKeepsNothing() throws IOException {
        FileCache off = new FileCache(0, LATER);

        assertThat(off.enabled()).isFalse();
        assertThat(off.keep(file, FileCache.stamp(file), FileVersion.of(file))).isNull();
        assertThat(off.entries()).isZero();
    }
}
