package io.pintle.server.cli;

import io.pintle.server.Bootstrap;
import io.pintle.server.PintleServer;
import io.pintle.server.config.ConfigException;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.reload.SnapshotException;
import io.pintle.server.systemd.SystemdHandoff;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code pintle serve}: runs the server until stopped (SIGTERM or Ctrl-C stop it gracefully); SIGHUP reloads the
 * configuration and every input file.
 */
@Command(name = "serve", mixinStandardHelpOptions = true, description = "Run the server (the default command).")
public final class ServeCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

    @Mixin
    ConfigOption config = new ConfigOption();

    @Override
    public Integer call() throws Exception {
        ServerConfig loaded;
        PintleServer server;
        try {
            loaded = config.load();
            server = Bootstrap.build(loaded, SystemdHandoff.fromProcess());
        } catch (ConfigException | SnapshotException e) {
            LOG.error("configuration error: {}", e.getMessage());
            return ExitCodes.CONFIG_ERROR;
        }
        try {
            server.start();
        } catch (Exception e) {
            LOG.error("cannot start on {}: {}", loaded.general().listen(), e.getMessage());
            server.close();
            return ExitCodes.STARTUP_FAILURE;
        }
        Signals.onHangup(() -> server.reloader().reload("SIGHUP"));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (Exception e) {
                LOG.warn("error while stopping: {}", e.getMessage());
            } finally {
                Logging.flush();
            }
        }, "pintle-shutdown"));
        server.join();
        return ExitCodes.OK;
    }
}
