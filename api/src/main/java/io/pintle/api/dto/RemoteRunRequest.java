package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * Pintle's JSON remote-run request ({@code POST <relay api>/remote-run/...} with {@code Content-Type:
 * application/json}): one command of a fixed set, never a command line.
 *
 * @param command {@code run} (policy update then run), {@code update} (policy update only) or {@code inventory}
 * @param conditions conditions (CFEngine classes) to define, each {@code ^[a-zA-Z0-9][a-zA-Z0-9_]*$}, at most 1024
 *     characters in all; may be null
 * @param verbosity {@code info}, {@code debug} or {@code trace} (defined as a condition of the same name, as
 *     cf-serverd's {@code roles} allowed), or null for the agent's default
 * @param nodes with {@code remote-run/nodes}: the node ids; null with {@code nodes/{id}} and {@code all}
 * @param asynchronous answer 202 at once and run in the background, instead of streaming events
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RemoteRunRequest(
        String command, List<String> conditions, String verbosity, List<String> nodes, boolean asynchronous) {
    /** {@code command}: update the policies, then run the agent ({@code rudder agent run -uR}). */
    public static final String RUN = "run";
    /** {@code command}: update the policies only. */
    public static final String UPDATE = "update";
    /** {@code command}: make and send an inventory. */
    public static final String INVENTORY = "inventory";

    public RemoteRunRequest {
        conditions = conditions == null ? null : List.copyOf(conditions);
        nodes = nodes == null ? null : List.copyOf(nodes);
    }
}
