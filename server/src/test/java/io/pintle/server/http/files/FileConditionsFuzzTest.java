package io.pintle.server.http.files;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * Fuzzes {@link FileConditions#evaluate}: {@code Range}, {@code If-Range} and {@code If-None-Match} from the input
 * (NUL separated, in that order; a missing part is an absent header), for a 1000-byte and an empty file. It never
 * throws, and answers only what these headers allow: a 206 within the file, a 416 only for a range, a 304 only
 * for a listed ETag. Seeds: {@code FileConditionsFuzzTestInputs/rangeAndConditionalHeaders/}.
 */
class FileConditionsFuzzTest {
    private static final String ETAG = "\"2b1f4c0e\"";
    private static final Instant MODIFIED = Instant.parse("2026-12-01T10:00:00Z");

    @FuzzTest(maxDuration = "2m")
    void rangeAndConditionalHeaders(byte[] input) {
        String[] headers = new String(input, StandardCharsets.ISO_8859_1).split("\0", -1);
        check(1000, headers);
        check(0, headers);
    }

    private static void check(long size, String[] parts) {
        String range = parts.length > 0 && !parts[0].isEmpty() ? parts[0] : null;
        String ifRange = parts.length > 1 ? parts[1] : null;
        String ifNoneMatch = parts.length > 2 ? parts[2] : null;
        FileConditions.Outcome outcome = FileConditions.evaluate(true,
                new FileConditions.Headers(null, ifNoneMatch, null, null, ifRange, range),
                new FileConditions.Representation(ETAG, MODIFIED, size));
        if (outcome instanceof FileConditions.Outcome.Partial partial) {
            assertThat(range).isNotNull();
            assertThat(partial.first()).isBetween(0L, partial.last());
            assertThat(partial.last()).isLessThan(size);
        } else if (outcome instanceof FileConditions.Outcome.Unsatisfiable) {
            assertThat(range).isNotNull();
        } else if (outcome instanceof FileConditions.Outcome.NotModified) {
            assertThat(ifNoneMatch).isNotNull();
            assertThat(ifNoneMatch.contains(ETAG) || ifNoneMatch.strip().equals("*")).as(ifNoneMatch).isTrue();
        } else {
            assertThat(outcome).isInstanceOf(FileConditions.Outcome.Full.class);
        }
    }
}
