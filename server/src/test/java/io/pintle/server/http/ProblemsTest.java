package io.pintle.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.dto.Problem;
import io.pintle.server.problem.PintleException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Each kind of refusal the domain raises has one status, given here at the edge, and keeps its reason. */
class ProblemsTest {
    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of(new PintleException.AccessDenied("unknown-key", "d"), 403, "Access denied"),
                Arguments.of(new PintleException.NotFound("no-such-file", "d"), 404, "Not found"),
                Arguments.of(new PintleException.InvalidRequest("bad-view", "d"), 400, "Invalid request"),
                Arguments.of(new PintleException.Unavailable("too-many-waiters", "d", 5), 503, "Service Unavailable"),
                Arguments.of(new PintleException.TooLarge("too-large", "d"), 413, "Content Too Large"),
                Arguments.of(new PintleException.LengthRequired("length-required", "d"), 411, "Length Required"),
                Arguments.of(new PintleException.UnsupportedMediaType("unsupported-media-type", "d"), 415,
                        "Unsupported Media Type"),
                Arguments.of(new PintleException.UpstreamFailed("upstream-unreachable", "d"), 502, "Bad Gateway"),
                Arguments.of(new PintleException.UpstreamTimedOut("webapp-timeout", "d"), 504, "Gateway Timeout"),
                Arguments.of(new PintleException.TooSlow("upload-too-slow", "d"), 408, "Request Timeout"));
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @MethodSource("refusals")
    void eachKindOfRefusalHasOneStatus(PintleException refusal, int status, String title) {
        Problem problem = Problems.of(refusal, "/x");
        assertThat(problem.status()).isEqualTo(status);
        assertThat(problem.title()).isEqualTo(title);
        assertThat(problem.reason()).isEqualTo(refusal.reason());
        assertThat(problem.type()).isEqualTo("urn:pintle:problem:" + refusal.reason());
        assertThat(problem.detail()).isEqualTo("d");
        assertThat(problem.incident()).isNull();
    }

    @Test
    void aServerErrorCarriesOnlyAnIncidentId() {
        Problem problem = Problems.incident(new IllegalStateException("secret internals"), null, "/x");
        assertThat(problem.status()).isEqualTo(500);
        assertThat(problem.detail()).doesNotContain("secret").isEqualTo(Problems.SERVER_ERROR_DETAIL);
        assertThat(problem.incident()).isNotBlank();
    }
}
