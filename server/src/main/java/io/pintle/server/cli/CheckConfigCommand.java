package io.pintle.server.cli;

import io.pintle.server.config.ConfigException;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.IdRule;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotException;
import io.pintle.server.reload.SnapshotLoader;
import java.io.PrintWriter;
import java.time.Clock;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code pintle check-config}: validates the configuration and every file it names, without serving. */
@Command(name = "check-config", mixinStandardHelpOptions = true,
        description = "Validate the configuration and the files it names; exit 0 if valid, 2 with the reason if not.")
public final class CheckConfigCommand implements Callable<Integer> {
    @Mixin
    ConfigOption config = new ConfigOption();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            ServerConfig loaded = config.load();
            ServerSnapshot snapshot = new SnapshotLoader(loaded, Clock.systemUTC()).load(1);
            out.printf("configuration OK: %s%n", loaded.source());
            out.printf("  node id %s, role %s, listen %s%n", snapshot.self(), loaded.general().role().text(),
                    loaded.general().listen());
            out.printf("  %d nodes, %d pinned keys, share %s%n", snapshot.nodes().nodeCount(),
                    snapshot.nodes().pinCount(), snapshot.share().root());
            out.printf("  server key %s%n", snapshot.credentials().keyHash());
            NodeTrust trust = snapshot.trust();
            out.printf("  trust: %s%s%n", String.join(" + ", trust.modes().stream().map(NodeTrust.Mode::text).toList()),
                    trust.validation() ? " (CA bundle " + trust.ca().file() + ": " + trust.ca().certificates().size()
                            + " certificate(s), depth " + trust.ca().maxDepth() + "; id rules "
                            + trust.idRules().stream().map(IdRule::text).toList() + ")" : "");
            if (!trust.revocations().crls().isEmpty() || !trust.revocations().denied().isEmpty()) {
                out.printf("  revocation: %d CRL(s), %d denied key(s)%n", trust.revocations().crls().size(),
                        trust.revocations().denied().size());
            }
            int disagreements = snapshot.nodes().disagreements();
            if (disagreements > 0) {
                out.printf("  %d node ids are in nodeslist.json or the node certificates but not both with the same "
                        + "key: they are refused until both pin them%n", disagreements);
            }
            return ExitCodes.OK;
        } catch (ConfigException | SnapshotException e) {
            err.println("pintle: configuration error: " + e.getMessage());
            return ExitCodes.CONFIG_ERROR;
        }
    }
}
