package io.pintle.server.http.files;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** RFC 9110's preconditions and ranges, as every file route answers them. */
class FileConditionsTest {
    private static final String ETAG = "\"abc\"";
    /** Sun, 06 Nov 1994 08:49:37 GMT, with a fraction that HTTP dates cannot carry. */
    private static final Instant MODIFIED = Instant.parse("1994-11-06T08:49:37.250Z");
    private static final String AT = "Sun, 06 Nov 1994 08:49:37 GMT";
    private static final String BEFORE = "Sun, 06 Nov 1994 08:49:36 GMT";
    private static final String AFTER = "Sun, 06 Nov 1994 08:49:38 GMT";
    private static final FileConditions.Representation FILE =
            new FileConditions.Representation(ETAG, MODIFIED, 1000);

    @ParameterizedTest(name = "[{index}] {0} weak={2}")
    @CsvSource(delimiter = '|', value = {
        "\"abc\"                | true  | true",
        "W/\"abc\"              | true  | true",
        "W/\"abc\"              | false | false",
        "*                      | true  | true",
        "*                      | false | true",
        "\"x\", \"abc\"         | true  | true",
        "\"x\",W/\"abc\"        | true  | true",
        "\"x\" ,  \"abc\"       | false | true",
        ",, \"abc\" ,           | true  | true",
        "\"x\"                  | true  | false",
        "\"abc--gzip\"          | true  | false",
        "abc                    | true  | false",
        "\"abc                  | true  | false",
        "\"a\"bc\"              | true  | false",
        "\"x\" \"abc\"          | true  | false",
        "*, \"abc\"             | true  | false",
        "W/                     | true  | false",
    })
    void entityTagListsAreComparedWeaklyOrStronglyAndAnythingMalformedMatchesNothing(String header, boolean weak,
            boolean expected) {
        assertThat(FileConditions.matches(header, ETAG, !weak)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0} of 1000 -> {1}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
        "bytes=0-99                      | 0   | 99",
        "bytes=900-                      | 900 | 999",
        "bytes=-100                      | 900 | 999",
        "bytes=990-2000                  | 990 | 999",
        "BYTES = 0-0                     | -   | -",
        "bytes= 5 - 9                    | 5   | 9",
        "bytes=0-9999999999999999999     | 0   | 999",
        "bytes=0-99999999999999999999999 | 0   | 999",
        "bytes=-9999999999999999999      | 0   | 999",
        "bytes=-5000                     | 0   | 999",
    })
    void oneRangeIsServedAndPositionsPastTheEndMeanTheEnd(String range, Long first, Long last) {
        FileConditions.Outcome outcome = FileConditions.range(range, 1000);
        if (first == null) {
            assertThat(outcome).isInstanceOf(FileConditions.Outcome.Full.class);
        } else {
            assertThat(outcome).isEqualTo(new FileConditions.Outcome.Partial(first, last));
        }
    }

    @ParameterizedTest(name = "[{index}] {0} of {1} -> {2}")
    @CsvSource(delimiter = '|', value = {
        "bytes=1000-                     | 1000 | Unsatisfiable",
        "bytes=9999999999999999999-      | 1000 | Unsatisfiable",
        "bytes=-0                        | 1000 | Unsatisfiable",
        "bytes=0-                        | 0    | Unsatisfiable",
        "bytes=-10                       | 0    | Unsatisfiable",
        "bytes=0-1,5-6                   | 1000 | Full",
        "bytes=5-1                       | 1000 | Full",
        "bytes=-                         | 1000 | Full",
        "bytes=abc                       | 1000 | Full",
        "items=0-1                       | 1000 | Full",
        "bytes=0x1-2                     | 1000 | Full",
        "bytes                           | 1000 | Full",
    })
    void otherRangesAreRefusedWith416OrIgnored(String range, long size, String expected) {
        assertThat(FileConditions.range(range, size).getClass().getSimpleName()).isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
        // name                             | If-Match  | If-None-Match | If-Modified-Since | If-Unmodified-Since | If-Range | Range     | GET  | outcome
        "no condition                       | -         | -             | -                 | -                   | -        | -         | true | Full",
        "current ETag                       | -         | \"abc\"       | -                 | -                   | -        | -         | true | NotModified",
        "current ETag, HEAD                 | -         | \"abc\"       | -                 | -                   | -        | -         | false| NotModified",
        "old ETag                           | -         | \"old\"       | -                 | -                   | -        | -         | true | Full",
        "old ETag wins over a later date    | -         | \"old\"       | AFTER             | -                   | -        | -         | true | Full",
        "malformed If-None-Match            | -         | abc           | -                 | -                   | -        | -         | true | Full",
        "If-Match holds                     | \"abc\"   | -             | -                 | -                   | -        | -         | true | Full",
        "If-Match fails                     | \"old\"   | -             | -                 | -                   | -        | -         | true | PreconditionFailed",
        "If-Match weak never holds          | W/\"abc\" | -             | -                 | -                   | -        | -         | true | PreconditionFailed",
        "If-Match before If-None-Match      | \"old\"   | \"abc\"       | -                 | -                   | -        | -         | true | PreconditionFailed",
        "If-Match star                      | *         | -             | -                 | -                   | -        | bytes=0-1 | true | Partial",
        "range on GET                       | -         | -             | -                 | -                   | -        | bytes=0-1 | true | Partial",
        "range ignored on HEAD              | -         | -             | -                 | -                   | -        | bytes=0-1 | false| Full",
        "If-Range with the ETag             | -         | -             | -                 | -                   | \"abc\"  | bytes=0-1 | true | Partial",
        "If-Range with a weak ETag          | -         | -             | -                 | -                   | W/\"abc\"| bytes=0-1 | true | Full",
        "If-Range with an old ETag          | -         | -             | -                 | -                   | \"old\"  | bytes=0-1 | true | Full",
        "range after a failed If-None-Match | -         | \"old\"       | -                 | -                   | -        | bytes=0-1 | true | Partial",
        "304 wins over a range              | -         | \"abc\"       | -                 | -                   | -        | bytes=0-1 | true | NotModified",
    })
    void entityTagConditionsAndRangesAreEvaluatedInRfc9110Order(String name, String ifMatch, String ifNoneMatch,
            String ifModifiedSince, String ifUnmodifiedSince, String ifRange, String range, boolean get,
            String expected) {
        FileConditions.Headers headers = new FileConditions.Headers(ifMatch, ifNoneMatch, date(ifModifiedSince),
                date(ifUnmodifiedSince), ifRange, range);
        assertThat(FileConditions.evaluate(get, headers, FILE).getClass().getSimpleName()).as(name)
                .isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
        "modified since before       | BEFORE | -      | -      | Full",
        "not modified since at       | AT     | -      | -      | NotModified",
        "not modified since after    | AFTER  | -      | -      | NotModified",
        "invalid date is ignored     | junk   | -      | -      | Full",
        "unmodified since at         | -      | AT     | -      | Full",
        "unmodified since before     | -      | BEFORE | -      | PreconditionFailed",
        "invalid unmodified ignored  | -      | junk   | -      | Full",
        "If-Range with the date      | -      | -      | AT     | Partial",
        "If-Range with another date  | -      | -      | BEFORE | Full",
        "If-Range with junk          | -      | -      | junk   | Full",
    })
    void datesAreComparedInWholeSecondsAndInvalidDatesAreIgnored(String name, String ifModifiedSince,
            String ifUnmodifiedSince, String ifRange, String expected) {
        FileConditions.Headers headers = new FileConditions.Headers(null, null, date(ifModifiedSince),
                date(ifUnmodifiedSince), date(ifRange), ifRange != null ? "bytes=0-1" : null);
        assertThat(FileConditions.evaluate(true, headers, FILE).getClass().getSimpleName()).as(name)
                .isEqualTo(expected);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
        "\"t\"    | NotModified",
        "*        | NotModified",
        "\"old\"  | Full",
    })
    void generatedViewsHaveNoDateAndNoRange(String ifNoneMatch, String expected) {
        FileConditions.Headers headers = new FileConditions.Headers(null, ifNoneMatch, AT, null, null, "bytes=0-1");
        assertThat(FileConditions.evaluate(true, headers, new FileConditions.Representation("\"t\"", null, -1))
                .getClass().getSimpleName()).isEqualTo(expected);
    }

    private static String date(String name) {
        if (name == null) {
            return null;
        }
        return switch (name) {
            case "AT" -> AT;
            case "BEFORE" -> BEFORE;
            case "AFTER" -> AFTER;
            default -> name;
        };
    }
}
