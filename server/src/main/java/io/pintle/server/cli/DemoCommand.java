package io.pintle.server.cli;

import io.pintle.server.Bootstrap;
import io.pintle.server.PintleServer;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.demo.DemoLayout;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
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

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Path dir = directory != null ? directory : Files.createTempDirectory("pintle-demo-");
        DemoLayout layout = DemoLayout.create(dir, port);
        PintleServer server = Bootstrap.build(ConfigLoader.load(layout.config()));
        try {
            server.start();
        } catch (Exception e) {
            spec.commandLine().getErr().println("pintle demo: cannot listen on 127.0.0.1:" + port + ": " + e.getMessage());
            server.close();
            return ExitCodes.STARTUP_FAILURE;
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println();
        out.println("# Pintle demo: server 'root' on " + server.uri() + " (admin " + server.adminUri() + "), sandbox in "
                + layout.directory());
        out.println("# Nodes: " + layout.linux1() + " (Linux, RSA), " + layout.linux2() + " (Linux, EC), "
                + layout.windows() + " (Windows/DSC)");
        out.println("# Server key pin (what agents pass to --pinnedpubkey): " + layout.serverPin());
        out.println("# Each command prints the HTTP status on its last line.");
        for (DemoLayout.Step step : layout.steps(server.port(), server.adminPort())) {
            out.println();
            out.println("# " + step.title() + " -> " + step.expectedStatus());
            out.println(step.command());
        }
        out.println();
        out.println("# Serving until Ctrl-C. Configuration: " + layout.config());
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
