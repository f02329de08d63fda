package io.pintle.server.reload;

import io.pintle.server.acl.AllowedNetworks;
import io.pintle.server.acl.NetworksLoader;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.CertificateBinding;
import io.pintle.server.nodes.CertificatesLoader;
import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeRegistry;
import io.pintle.server.nodes.NodesListLoader;
import io.pintle.server.policy.ShareTree;
import io.pintle.server.tls.ServerCredentials;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds a complete snapshot from the files the configuration names, or fails naming the file. */
public final class SnapshotLoader {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotLoader.class);

    private final ServerConfig config;
    private final Clock clock;

    /**
     * @param config the configuration naming the input files
     * @param clock the clock stamping snapshots
     */
    public SnapshotLoader(ServerConfig config, Clock clock) {
        this.config = config;
        this.clock = clock;
    }

    /**
     * @param config a configuration
     * @return every file a snapshot built from it reads (the configuration file itself when it exists), in a
     *     stable order without duplicates
     */
    public static List<Path> inputFiles(ServerConfig config) {
        Set<Path> files = new LinkedHashSet<>();
        if (config.source() != null && Files.exists(config.source())) {
            files.add(config.source());
        }
        files.add(config.nodes().list());
        files.addAll(config.nodes().certificates());
        if (config.networks().allowedFile() != null) {
            files.add(config.networks().allowedFile());
        }
        files.add(config.tls().certificate());
        files.add(config.tls().key());
        return List.copyOf(files);
    }

    /**
     * @param generation the generation number to give the snapshot
     * @return the snapshot
     * @throws SnapshotException naming the file and reason when an input is missing or invalid
     */
    public ServerSnapshot load(long generation) throws SnapshotException {
        try {
            // Digests first: if a file changes after being hashed, its watch event triggers another reload that
            // sees a new digest, so no change is ever missed.
            Map<Path, InputDigest> inputs = new LinkedHashMap<>();
            for (Path file : inputFiles(config)) {
                inputs.put(file, InputDigest.of(file));
            }
            AllowedNetworks networks = NetworksLoader.load(
                    config.networks().allowedFile(), config.networks().allowed(), "networks.allowed");
            List<Node> nodes = NodesListLoader.load(config.nodes().list());
            List<CertificateBinding> bindings = new ArrayList<>();
            for (Path file : config.nodes().certificates()) {
                bindings.addAll(CertificatesLoader.load(file, LOG::warn));
            }
            ServerCredentials credentials = ServerCredentials.load(config.tls().certificate(), config.tls().key());
            Path share = config.paths().share();
            if (!Files.isDirectory(share)) {
                throw new IOException(share + ": share directory does not exist (paths.share)");
            }
            return new ServerSnapshot(generation, clock.instant(), config, config.general().nodeId(),
                    NodeRegistry.of(nodes, bindings), networks, new ShareTree(share), credentials, inputs);
        } catch (IOException e) {
            throw new SnapshotException(e.getMessage(), e);
        }
    }
}
