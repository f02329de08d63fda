package io.pintle.api;

/** Media types Pintle produces beyond the usual ones. */
public final class MediaTypes {
    /** RFC 9457 problem details: the body of every Pintle error response. */
    public static final String PROBLEM_JSON = "application/problem+json";

    /** A {@code ?view=archive} response. */
    public static final String TAR_GZIP = "application/gzip";

    private MediaTypes() {}
}
