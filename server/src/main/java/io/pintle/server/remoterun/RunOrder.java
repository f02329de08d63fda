package io.pintle.server.remoterun;

import io.pintle.api.dto.RemoteRunRequest;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.problem.PintleException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What every targeted agent is asked to do: one command of the set and validated conditions (a verbosity is one
 * of them, as cf-serverd's {@code roles} allowed {@code info}, {@code debug} and {@code trace}).
 *
 * @param command the command
 * @param conditions the conditions, verbosity included
 */
public record RunOrder(AgentCommand command, Conditions conditions) {
    /** Verbosities a request may ask for, defined as conditions of the same name. */
    public static final List<String> VERBOSITIES = List.of("info", "debug", "trace");

    public RunOrder {
        Objects.requireNonNull(command);
        Objects.requireNonNull(conditions);
    }

    /**
     * @param command the request's {@code command}
     * @param conditions its conditions, or null
     * @param verbosity its verbosity, or null
     * @return the order
     * @throws PintleException.InvalidRequest when anything is outside the fixed set or invalid
     */
    public static RunOrder of(String command, List<String> conditions, String verbosity) {
        AgentCommand parsed = AgentCommand.parse(command);
        if (verbosity != null && !VERBOSITIES.contains(verbosity)) {
            throw new PintleException.InvalidRequest("invalid-verbosity", "'verbosity' must be info, debug or trace, "
                    + "not '" + verbosity + "'");
        }
        return new RunOrder(parsed, new Conditions(conditions == null ? List.of() : conditions).with(verbosity));
    }

    /**
     * @param config {@code [remote_run]}
     * @return the exact argv: the command's configured list, then {@code -D a,b} when there are conditions
     */
    public List<String> argv(ServerConfig.RemoteRun config) {
        List<String> argv = new ArrayList<>(command.argv(config));
        if (!conditions.isEmpty()) {
            argv.add("-D");
            argv.add(conditions.joined());
        }
        return List.copyOf(argv);
    }

    /**
     * @param nodes the nodes for the next server, or null
     * @return the request that passes this order on
     */
    public RemoteRunRequest request(List<String> nodes) {
        return new RemoteRunRequest(command.wire(), conditions.values(), null, nodes, false);
    }
}
