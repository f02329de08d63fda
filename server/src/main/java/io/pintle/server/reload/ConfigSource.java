package io.pintle.server.reload;

import io.pintle.server.config.ConfigException;
import io.pintle.server.config.ServerConfig;

/** Reads the configuration again at each reload (the file may have changed). */
@FunctionalInterface
public interface ConfigSource {
    /**
     * @return the current configuration
     * @throws ConfigException when it is invalid
     */
    ServerConfig load() throws ConfigException;
}
