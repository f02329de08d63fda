package io.pintle.server;

import io.pintle.server.cli.CheckConfigCommand;
import io.pintle.server.cli.DemoCommand;
import io.pintle.server.cli.ExitCodes;
import io.pintle.server.cli.ExplainCommand;
import io.pintle.server.cli.FreezeCommand;
import io.pintle.server.cli.NodesCommand;
import io.pintle.server.cli.KeygenCommand;
import io.pintle.server.cli.ReloadCommand;
import io.pintle.server.cli.ServeCommand;
import io.pintle.server.cli.SyncCommand;
import java.util.concurrent.Callable;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code pintle} command line: parses arguments, runs one command, maps failures to exit codes. */
@Command(
        name = "pintle",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "HTTPS policy and file server for Rudder and CFEngine/DSC fleets.",
        subcommands = {ServeCommand.class, ReloadCommand.class, CheckConfigCommand.class, DemoCommand.class,
                KeygenCommand.class, SyncCommand.class, NodesCommand.class, FreezeCommand.class},
        footer = {"", "Exit codes: 0 normal, 1 reload refused (explain: the server would refuse), 2 configuration "
                + "error, 3 other startup failure (or, for reload, server unreachable)."})
public final class Main implements Callable<Integer> {

    /** Without a sub-command, {@code pintle} serves with the default configuration. */
    @Override
    public Integer call() throws Exception {
        return new ServeCommand().call();
    }

    /**
     * @param args command line
     */
    public static void main(String[] args) {
        // Process-wide, so here and not in run(): Jersey's java.util.logging output goes to SLF4J.
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        System.exit(run(args));
    }

    /**
     * @param args command line
     * @return the exit code
     */
    public static int run(String... args) {
        CommandLine commandLine = new CommandLine(new Main());
        commandLine.addSubcommand(new ExplainCommand());
        commandLine.setExecutionExceptionHandler((exception, line, parsed) -> {
            line.getErr().println("pintle: " + exception.getMessage());
            return ExitCodes.STARTUP_FAILURE;
        });
        return commandLine.execute(args);
    }

    /** Reads the version from the jar manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Main.class.getPackage().getImplementationVersion();
            return new String[] {"pintle " + (version != null ? version : "development build")};
        }
    }
}
