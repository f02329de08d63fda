package io.pintle.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DirectFileHandlerTest {
    private static final String ETAG = "\"abc\"";

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "\"abc\"                | YES",
        "W/\"abc\"              | YES",
        "*                      | YES",
        "\"x\", \"abc\"         | YES",
        "\"x\",W/\"abc\"        | YES",
        "\"x\"                  | NO",
        "\"abc--gzip\"          | NO",
        "abc                    | UNKNOWN",
        "\"abc                  | UNKNOWN",
        "\"a\"bc\"              | UNKNOWN",
        "\"x\",                 | UNKNOWN",
        "*, \"abc\"             | UNKNOWN",
    })
    void ifNoneMatchIsComparedWeaklyAndAnythingUnusualIsLeftToJersey(String header, DirectFileHandler.Match expected) {
        assertThat(DirectFileHandler.match(header, ETAG)).isEqualTo(expected);
    }
}
