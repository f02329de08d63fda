package io.pintle.server.delivery;

import io.pintle.server.nodes.Node;

/**
 * One node as the admin API shows it: what was recorded, and what it means now.
 *
 * @param node the node, as {@code nodeslist.json} lists it
 * @param record what was recorded of its traffic
 * @param currentEtag the tag its policy entry is served with now (the entry it last fetched, else its Linux
 *     archive), or null when absent
 * @param behind whether it does not hold what is served now (never fetched, or fetched an older version)
 * @param silent whether it sent no request for {@code [delivery] silent_after_seconds}
 * @param frozen whether it is held by a freeze
 * @param channel whether it holds an order channel now
 */
public record NodeState(Node node, NodeRecord record, String currentEtag, boolean behind, boolean silent,
        boolean frozen, boolean channel) {}
