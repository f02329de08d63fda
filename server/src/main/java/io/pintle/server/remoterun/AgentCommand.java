package io.pintle.server.remoterun;

import io.pintle.api.dto.RemoteRunRequest;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.problem.PintleException;
import java.util.List;
import java.util.Locale;

/** The only things a remote run can ask an agent to do; each maps to a configured argv, never a command line. */
public enum AgentCommand {
    /** Policy update, then a run: cf-serverd's {@code cfruncommand} ({@code rudder agent run -uR}). */
    RUN(RemoteRunRequest.RUN),
    /** Policy update only. */
    UPDATE(RemoteRunRequest.UPDATE),
    /** Inventory now (cf-serverd's {@code force_inventory} role). */
    INVENTORY(RemoteRunRequest.INVENTORY);

    private final String wire;

    AgentCommand(String wire) {
        this.wire = wire;
    }

    /** @return the name in requests */
    public String wire() {
        return wire;
    }

    /**
     * @param text a request's {@code command}
     * @return the command
     * @throws PintleException.InvalidRequest when it is missing or not one of the set
     */
    public static AgentCommand parse(String text) {
        if (text != null) {
            for (AgentCommand command : values()) {
                if (command.wire.equals(text)) {
                    return command;
                }
            }
        }
        throw new PintleException.InvalidRequest("unknown-command", "'command' must be run, update or inventory, not "
                + (text == null ? "missing" : "'" + text + "'"));
    }

    /**
     * @param config {@code [remote_run]}
     * @return this command's configured argv
     */
    public List<String> argv(ServerConfig.RemoteRun config) {
        return switch (this) {
            case RUN -> config.run();
            case UPDATE -> config.update();
            case INVENTORY -> config.inventory();
        };
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
