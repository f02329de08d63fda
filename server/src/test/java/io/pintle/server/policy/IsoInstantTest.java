package io.pintle.server.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A manifest's times and modes as the JDK's own formatting writes them, which is the wire form. */
class IsoInstantTest {
    @Test
    void edgesAreWrittenAsTheJdkWritesThem() {
        long last = IsoInstant.LAST_FOUR_DIGIT_SECOND;
        long[] seconds = {0, 1, 59, 60, 3_599, 3_600, 86_399, 86_400, 951_782_400 /* 2000-02-29 */,
            4_107_542_400L /* 2100-03-01 */, 1_796_587_081L, last - 1, last, last + 1, -1, -86_401,
            Instant.MAX.getEpochSecond(), Instant.MIN.getEpochSecond()};
        int[] nanos = {0, 1, 9, 10, 999, 1_000, 1_001, 100_000, 999_999, 1_000_000, 1_000_001, 10_000_000,
            100_000_000, 120_000_000, 123_456_000, 123_456_789, 999_000_000, 999_999_000, 999_999_999};
        for (long second : seconds) {
            for (int nano : nanos) {
                Instant instant = Instant.ofEpochSecond(second, nano);
                assertThat(IsoInstant.format(instant)).as("%s", instant).isEqualTo(instant.toString());
            }
        }
    }

    @Test
    void randomInstantsAreWrittenAsTheJdkWritesThem() {
        SplittableRandom random = new SplittableRandom(39);
        for (int i = 0; i < 200_000; i++) {
            long second = random.nextLong(-IsoInstant.LAST_FOUR_DIGIT_SECOND, 2 * IsoInstant.LAST_FOUR_DIGIT_SECOND);
            // File systems give whole seconds, milliseconds, microseconds or nanoseconds: each form of fraction.
            int nano = switch (i % 4) {
                case 0 -> 0;
                case 1 -> random.nextInt(1_000) * 1_000_000;
                case 2 -> random.nextInt(1_000_000) * 1_000;
                default -> random.nextInt(1_000_000_000);
            };
            Instant instant = Instant.ofEpochSecond(second, nano);
            assertThat(IsoInstant.format(instant)).as("%s", instant).isEqualTo(instant.toString());
        }
    }

    @Test
    void everyModeIsWrittenAsFourOctalDigits(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("f"), "x");
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-12-07T19:58:01.123456789Z")));
        FileStat stat = FileStat.of(file);
        assertThat(stat.isoModified()).isEqualTo("2026-12-07T19:58:01.123456789Z");
        for (int mode = 0; mode <= 07777; mode++) {
            FileStat withMode = new FileStat(stat.path(), stat.kind(), stat.identity(), stat.size(),
                    stat.modified(), mode);
            assertThat(withMode.octalMode()).as("mode %o", mode).isEqualTo(String.format("%04o", mode));
        }
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        assertThat(FileStat.of(file).octalMode()).isEqualTo("0640");
    }
}
