package io.pintle.server.cli;

import io.pintle.server.Bootstrap;
import io.pintle.server.PintleServer;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.demo.DemoCaLayout;
import io.pintle.server.demo.DemoLayout;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code pintle demo}: writes a sandbox Rudder layout, serves it on 127.0.0.1 and prints curl commands. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Create a sandbox Rudder server layout (keys, nodes, policies), serve it on 127.0.0.1 and "
                + "print curl commands that exercise it. Stop with Ctrl-C.")
public final class DemoCommand implements Callable<Integer> {
    @Option(names = "--dir", paramLabel = "DIR", description = "where to create the sandbox (default: a new temporary directory)")
    Path directory;

    @Option(names = "--port", defaultValue = "0", description = "TLS port on 127.0.0.1 (default: any free port)")
    int port;

    @Option(names = "--ca", description = "certificate-validation mode (Rudder's cert_validation): a root and an "
            + "intermediate CA sign the server's and the nodes' certificates, agents verify the server with --cacert")
    boolean ca;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Path dir = directory != null ? directory : Files.createTempDirectory("pintle-demo-");
        DemoLayout layout = null;
        DemoCaLayout caLayout = null;
        Path config;
        if (ca) {
            caLayout = DemoCaLayout.create(dir, port);
            config = caLayout.config();
        } else {
            layout = DemoLayout.create(dir, port);
            config = layout.config();
        }
        PintleServer server = Bootstrap.build(ConfigLoader.load(config));
        try {
            server.start();
        } catch (Exception e) {
            spec.commandLine().getErr().println("pintle demo: cannot listen on 127.0.0.1:" + port + ": " + e.getMessage());
            server.close();
            return ExitCodes.STARTUP_FAILURE;
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println();
        List<DemoLayout.Step> steps;
        if (caLayout != null) {
            out.println("# Pintle demo, certificate-validation mode (Rudder's cert_validation): server 'root' on "
                    + server.uri() + " (admin " + server.adminUri() + "), sandbox in " + caLayout.directory());
            out.println("# CA file (the root; what agents pass to --cacert, [nodes] ca_file): " + caLayout.caFile());
            out.println("# Nodes: " + caLayout.uidNode() + " (id in subject UID), " + caLayout.sanNode()
                    + " (id in DNS SAN <id>" + DemoCaLayout.SAN_SUFFIX + "), " + caLayout.revokedNode()
                    + " (revoked by " + caLayout.crlFile() + ")");
            out.println("# To revoke a node, append its key pin to " + caLayout.deniedKeysFile() + " (the SAN node's: "
                    + "echo '" + caLayout.sanNodePin() + "' >> " + caLayout.deniedKeysFile() + "), or a CRL from "
                    + "your CA to " + caLayout.crlFile() + "; the server reloads on its own and refuses its next "
                    + "request.");
            out.println("# Each command prints the HTTP status on its last line.");
            steps = caLayout.steps(server.port());
        } else {
            out.println("# Pintle demo: server 'root' on " + server.uri() + " (admin " + server.adminUri()
                    + "), sandbox in " + layout.directory());
            out.println("# Nodes: " + layout.linux1() + " (Linux, RSA), " + layout.linux2() + " (Linux, EC), "
                    + layout.windows() + " (Windows/DSC)");
            out.println("# Server key pin (what agents pass to --pinnedpubkey): " + layout.serverPin());
            out.println("# Each command prints the HTTP status on its last line.");
            steps = layout.steps(server.port(), server.adminPort());
        }
        for (DemoLayout.Step step : steps) {
            out.println();
            out.println("# " + step.title() + " -> " + step.expectedStatus());
            out.println(step.command());
        }
        out.println();
        out.println("# Serving until Ctrl-C. Configuration: " + config);
        out.flush();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (Exception ignored) {
                // Exiting anyway.
            } finally {
                Logging.flush();
            }
        }, "pintle-demo-shutdown"));
        server.join();
        return ExitCodes.OK;
    }
}
