package io.pintle.server.cli;

/** Process exit codes, distinct so that systemd and scripts can tell failures apart. */
public final class ExitCodes {
    /** Normal end. */
    public static final int OK = 0;
    /** {@code pintle reload}: the server refused the new inputs (it keeps serving the previous ones). */
    public static final int RELOAD_FAILED = 1;
    /**
     * {@code pintle sync}: the sync did not complete (server refused, content kept changing); the local tree is
     * unchanged.
     */
    public static final int SYNC_FAILED = 1;
    /**
     * {@code pintle explain}: the server would refuse the certificate (without {@code --path}) or the request (with
     * it).
     */
    public static final int EXPLAIN_REFUSED = 1;
    /** The configuration or an input file it names is invalid (also picocli's code for bad usage). */
    public static final int CONFIG_ERROR = 2;
    /** Any other startup failure (port in use, permission denied...); for {@code reload}, server unreachable. */
    public static final int STARTUP_FAILURE = 3;

    private ExitCodes() {}
}
