package io.pintle.server.cli;

import io.pintle.server.config.ConfigException;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.config.ServerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The {@code --config} option shared by commands that read the server configuration. */
public final class ConfigOption {
    /** Read when {@code --config} is not given; without it, Rudder's defaults apply. */
    public static final String DEFAULT_FILE = "/etc/pintle/pintle.toml";
    /** {@link #DEFAULT_FILE}. */
    public static final Path DEFAULT = Path.of(DEFAULT_FILE);

    // Not picocli's defaultValue: an absent default file is not an error, so the option has no default value (and
    // ${DEFAULT-VALUE} would print "null").
    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
            description = "TOML configuration (default: " + DEFAULT_FILE + " if it exists, else Rudder's defaults)")
    Path file;

    /**
     * @return the configuration from {@code --config}, the default file, or built-in defaults
     * @throws ConfigException when it is invalid
     */
    public ServerConfig load() throws ConfigException {
        if (file != null) {
            return ConfigLoader.load(file);
        }
        if (Files.exists(DEFAULT)) {
            return ConfigLoader.load(DEFAULT);
        }
        return ConfigLoader.parse("", DEFAULT);
    }
}
