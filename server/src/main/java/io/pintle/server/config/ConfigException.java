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

    /**
     * @param source the configuration file
     * @param key the key, with its section ({@code limits.max_waiters})
     * @param actual its value
     * @param minimum the least it may be
     * @throws ConfigException when {@code actual} is less than {@code minimum}
     */
    static void requireAtLeast(java.nio.file.Path source, String key, long actual, long minimum)
            throws ConfigException {
        if (actual < minimum) {
            throw new ConfigException(source + ": '" + key + "' must be at least " + minimum + ", not " + actual);
        }
    }

    /**
     * @param source the configuration file
     * @param key the key, with its section ({@code limits.rate_check_seconds})
     * @param actual its value, a period read in whole seconds
     * @param minimum the fewest seconds it may be (refused as {@link #requireAtLeast} refuses)
     * @param maximum the most seconds it may be
     * @throws ConfigException when {@code actual} is outside the two
     */
    static void requireSeconds(java.nio.file.Path source, String key, java.time.Duration actual, long minimum,
            long maximum) throws ConfigException {
        requireAtLeast(source, key, actual.toSeconds(), minimum);
        if (actual.compareTo(java.time.Duration.ofSeconds(maximum)) > 0) {
            throw new ConfigException(source + ": '" + key + "' must be at most " + maximum + " seconds");
        }
    }
}
