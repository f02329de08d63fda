package io.pintle.server.reload;

/** A snapshot could not be built from the input files; the message names the file and the reason. */
public final class SnapshotException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed, naming the file
     * @param cause the underlying error
     */
    public SnapshotException(String message, Throwable cause) {
        super(message, cause);
    }
}
