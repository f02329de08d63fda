package io.pintle.api.dto;

import java.util.List;

/**
 * The answer (202) to an asynchronous JSON remote run: the run goes on in the background; its outcome is in the
 * servers' logs.
 *
 * @param nodes the node ids targeted
 */
public record RemoteRunAccepted(List<String> nodes) {
    public RemoteRunAccepted {
        nodes = List.copyOf(nodes);
    }
}
