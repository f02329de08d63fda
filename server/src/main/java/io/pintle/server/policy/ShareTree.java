package io.pintle.server.policy;

import io.pintle.server.nodes.NodeId;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Rudder's share directory ({@code /var/rudder/share}): one directory per node ({@code {share}/{id}}, with
 * {@code rules/} inside) and {@code common/} for the policy library archive.
 *
 * @param root the share directory
 */
public record ShareTree(Path root) {
    /** Name of the directory of files common to all nodes. */
    public static final String COMMON = "common";

    public ShareTree {
        Objects.requireNonNull(root);
        root = root.toAbsolutePath().normalize();
    }

    /**
     * @param node a node
     * @return the root of what that node may read under {@code /policies/{id}/}
     */
    public Path nodeRoot(NodeId node) {
        return root.resolve(node.value());
    }

    /** @return the root of {@code /common/} */
    public Path commonRoot() {
        return root.resolve(COMMON);
    }
}
