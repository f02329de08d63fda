package io.pintle.api.dto;

import java.util.List;

/**
 * {@code POST /v1/freeze}: which nodes to hold, and on what. An empty body freezes every node on its current
 * policies.
 *
 * @param nodes the nodes to freeze; absent or empty for every node with a policies directory
 * @param rollback hold them on their previous generation (Rudder's backup, or the last released freeze's copy)
 * @param reason a note kept with the freeze and shown in the status
 */
public record FreezeRequest(List<String> nodes, Boolean rollback, String reason) {}
