package io.pintle.server.reload;

import io.pintle.server.config.ServerConfig;
import io.pintle.server.policy.ShareTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a relay's sync from its policy server ({@code upstream.RelaySync}) writes, as the configuration says: the
 * loop that writes there and {@link SnapshotLoader}, which refuses a configuration where it could not, read it here.
 */
public final class RelaySyncTargets {
    private RelaySyncTargets() {}

    /** @return whether this configuration asks for relay sync: a relay with a policy server and sync on */
    public static boolean wanted(ServerConfig config) {
        return config.general().role() == ServerConfig.Role.RELAY && config.upstream().configured()
                && config.upstream().sync();
    }

    /**
     * A directory a relay sync writes into: it creates, renames and removes entries there (a synced tree is built
     * next to where it goes and renamed into place; a copied input is written next to it and renamed over it).
     *
     * @param key the configuration key naming what is synced, as an operator writes it ({@code [paths] share})
     * @param synced what is synced (a tree or a file)
     * @param directory where the sync writes for it: the share itself, or the parent of the synced path
     */
    public record Target(String key, Path synced, Path directory) {}

    /**
     * @param config a configuration for which {@link #wanted} holds
     * @return the directories the sync loops write into: the share (node directories and {@code common}), next to
     *     the shared folder, and next to the nodes list and first certificates file when those are copied
     */
    public static List<Target> of(ServerConfig config) {
        List<Target> targets = new ArrayList<>();
        Path share = new ShareTree(config.paths().share()).root();
        targets.add(new Target("[paths] share", share, share));
        // The sync's state, lock and staging tree live next to the synced directory, a symbolic link's target
        // when it is one (client-lib's DirectorySync).
        Path sharedFolder = config.paths().sharedFolder().toAbsolutePath().normalize();
        Path sharedFolderReal = sharedFolder;
        if (Files.isSymbolicLink(sharedFolder)) {
            try {
                sharedFolderReal = sharedFolder.toRealPath();
            } catch (IOException dangling) {
                // The sync fails on it too; the link's own directory is what can be reported.
            }
        }
        targets.add(new Target("[paths] shared_folder", sharedFolder, sharedFolderReal.getParent()));
        if (copiesNodesList(config)) {
            Path list = config.nodes().list().toAbsolutePath().normalize();
            targets.add(new Target("[nodes] list", list, list.getParent()));
        }
        if (copiesCertificates(config)) {
            Path certificates = config.nodes().certificates().get(0).toAbsolutePath().normalize();
            targets.add(new Target("[nodes] certificates", certificates, certificates.getParent()));
        }
        return List.copyOf(targets);
    }

    /** @return whether the sync copies the nodes list from the policy server ({@code [upstream] nodes_list}) */
    public static boolean copiesNodesList(ServerConfig config) {
        return !config.upstream().nodesList().isEmpty();
    }

    /** @return whether the sync copies the first certificates file ({@code [upstream] nodes_certificates}) */
    public static boolean copiesCertificates(ServerConfig config) {
        return !config.upstream().nodesCertificates().isEmpty() && !config.nodes().certificates().isEmpty();
    }
}
