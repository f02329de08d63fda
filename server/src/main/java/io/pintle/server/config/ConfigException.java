package io.pintle.server.config;

/** The configuration is invalid; the message names the file and the key. Maps to exit code 2. */
public final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what is wrong, naming file and key
     */
    public ConfigException(String message) {
        super(message);
    }

    /**
     * @param message what is wrong, naming file and key
     * @param cause the underlying error
     */
    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
