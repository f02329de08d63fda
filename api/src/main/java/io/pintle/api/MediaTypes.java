package io.pintle.api;

/** Media types Pintle produces beyond the usual ones. */
public final class MediaTypes {
    /** RFC 9457 problem details: the body of every Pintle error response. */
    public static final String PROBLEM_JSON = "application/problem+json";

    /** A {@code ?view=archive} response. */
    public static final String TAR_GZIP = "application/gzip";

    /**
     * Newline-delimited JSON: one {@link io.pintle.api.dto.RemoteRunEvent} per line, sent as it happens (remote
     * run's JSON answer).
     */
    public static final String NDJSON = "application/x-ndjson";

    private MediaTypes() {}
}
