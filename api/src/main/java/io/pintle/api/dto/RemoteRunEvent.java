package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One line of a remote run's NDJSON answer ({@code application/x-ndjson}), sent as it happens. Output lines of
 * different nodes interleave; each node ends with exactly one {@code status} event; the answer ends with one
 * {@code done} event (a stream without it was cut).
 *
 * @param type {@link #OUTPUT}, {@link #STATUS}, {@link #DONE} or {@link #KEEPALIVE}
 * @param node the node id ({@code output}, {@code status})
 * @param line one line of the agent's output, without its end of line ({@code output})
 * @param status the node's outcome ({@code status}): {@link #SUCCESS}, {@link #FAILED}, {@link #TIMEOUT},
 *     {@link #UNREACHABLE}, {@link #REFUSED}, {@link #UNKNOWN}, {@link #UNROUTABLE} or {@link #ERROR}
 * @param exitCode the agent's exit code, when it ended by itself ({@code status})
 * @param durationMs how long the node's run took as seen by the server that ran or called it ({@code status})
 * @param timedOut whether the agent was stopped at the timeout ({@code status})
 * @param detail why, for any status but success ({@code status})
 * @param nodes how many nodes the run targeted ({@code done})
 * @param succeeded how many of them succeeded ({@code done})
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RemoteRunEvent(String type, String node, String line, String status, Integer exitCode,
        Long durationMs, Boolean timedOut, String detail, Integer nodes, Integer succeeded) {
    /** {@code type}: a line of output. */
    public static final String OUTPUT = "output";
    /** {@code type}: a node's outcome. */
    public static final String STATUS = "status";
    /** {@code type}: the last event. */
    public static final String DONE = "done";
    /** {@code type}: nothing happened for a while (keeps idle connections and read timeouts from closing). */
    public static final String KEEPALIVE = "keepalive";

    /** {@code status}: the agent ran and exited with 0. */
    public static final String SUCCESS = "success";
    /** {@code status}: the agent ran and exited with another code. */
    public static final String FAILED = "failed";
    /** {@code status}: the agent was stopped at the timeout. */
    public static final String TIMEOUT = "timeout";
    /** {@code status}: the node (or the relay in between) could not be reached, or stopped answering. */
    public static final String UNREACHABLE = "unreachable";
    /** {@code status}: the node (or the relay in between) refused the request. */
    public static final String REFUSED = "refused";
    /** {@code status}: no such node below this server. */
    public static final String UNKNOWN = "unknown";
    /** {@code status}: the node's policy-server links loop or are deeper than 20. */
    public static final String UNROUTABLE = "unroutable";
    /** {@code status}: anything else (the agent could not be started, for example). */
    public static final String ERROR = "error";

    /**
     * @param node the node
     * @param line a line of its output
     * @return an output event
     */
    public static RemoteRunEvent output(String node, String line) {
        return new RemoteRunEvent(OUTPUT, node, line, null, null, null, null, null, null, null);
    }

    /**
     * @param node the node
     * @param status its outcome
     * @param exitCode the agent's exit code, or null
     * @param durationMs how long it took
     * @param timedOut whether the agent was stopped at the timeout
     * @param detail why, or null on success
     * @return a status event
     */
    public static RemoteRunEvent status(String node, String status, Integer exitCode, long durationMs,
            boolean timedOut, String detail) {
        return new RemoteRunEvent(STATUS, node, null, status, exitCode, durationMs, timedOut, detail, null, null);
    }

    /**
     * @param nodes nodes targeted
     * @param succeeded how many succeeded
     * @return the last event
     */
    public static RemoteRunEvent done(int nodes, int succeeded) {
        return new RemoteRunEvent(DONE, null, null, null, null, null, null, null, nodes, succeeded);
    }

    /** @return a keep-alive event */
    public static RemoteRunEvent keepalive() {
        return new RemoteRunEvent(KEEPALIVE, null, null, null, null, null, null, null, null, null);
    }
}
