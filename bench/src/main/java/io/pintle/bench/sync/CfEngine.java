package io.pintle.bench.sync;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * cf-serverd and cf-agent from the Debian {@code cfengine3} package, each with a private work directory
 * ({@code CFENGINE_TEST_OVERRIDE_WORKDIR}: keys, state, locks) under the benchmark's temporary directory, so
 * nothing in {@code /var/lib/cfengine3} is read or written. Keys come from {@code cf-key}; each side gets the
 * other's public key under its {@code root-MD5=…} name beforehand, as after Rudder's bootstrap, so no run trusts
 * on first use. The server admits the agent's key on the served directory; the agent copies with Rudder's
 * {@code body copy_from remote} ({@code rudder-domain.md} §1.6: {@code compare => "digest"},
 * {@code preserve => "false"}, {@code verify => "true"}, {@code purge => "true"}, {@code copy_backup => "false"},
 * TLS protocol 2) and {@code depth_search => recurse("inf")}.
 */
public final class CfEngine implements AutoCloseable {
    private static final String WORKDIR_VARIABLE = "CFENGINE_TEST_OVERRIDE_WORKDIR";
    /** cf-agent's default timeout in Rudder's failsafe.cf. */
    private static final int AGENT_NETWORK_TIMEOUT_SECONDS = 10;
    /** A run that takes longer than this fails the benchmark rather than hanging it. */
    private static final Duration AGENT_RUN_LIMIT = Duration.ofMinutes(6);
    private static final Duration START_LIMIT = Duration.ofSeconds(20);

    private final Path work;
    private final Path clientWorkdir;
    private final Process server;
    private final String version;
    private int policies;

    private CfEngine(Path work, Path clientWorkdir, Process server, String version) {
        this.work = work;
        this.clientWorkdir = clientWorkdir;
        this.server = server;
        this.version = version;
    }

    /**
     * Generates keys and the server policy, starts cf-serverd on 127.0.0.1:{@code port} and waits until it
     * listens.
     *
     * @param work a fresh directory for work directories, policies and logs
     * @param served the directory the agent may copy from (and below)
     * @param port the port
     * @return the running server
     * @throws IOException if a command fails
     */
    public static CfEngine start(Path work, Path served, int port) throws IOException, InterruptedException {
        Path serverWorkdir = work.resolve("server");
        Path clientWorkdir = work.resolve("agent");
        String serverKey = generateKey(serverWorkdir);
        String agentKey = generateKey(clientWorkdir);
        Files.copy(clientWorkdir.resolve("ppkeys/localhost.pub"), serverWorkdir.resolve("ppkeys/root-" + agentKey + ".pub"));
        Files.copy(serverWorkdir.resolve("ppkeys/localhost.pub"), clientWorkdir.resolve("ppkeys/root-" + serverKey + ".pub"));
        Path policy = work.resolve("server.cf");
        Files.writeString(policy, serverPolicy(served, port, agentKey));
        ProcessBuilder builder = new ProcessBuilder("cf-serverd", "--no-fork", "--file", policy.toString())
                .redirectErrorStream(true)
                .redirectOutput(work.resolve("cf-serverd.log").toFile());
        builder.environment().put(WORKDIR_VARIABLE, serverWorkdir.toString());
        Process server = builder.start();
        try {
            Ports.awaitListening(port, START_LIMIT, server);
        } catch (IOException e) {
            server.destroy();
            throw new IOException(e.getMessage() + "; cf-serverd.log: "
                    + Files.readString(work.resolve("cf-serverd.log")), e);
        }
        String version = run(List.of("cf-agent", "--version"), Map.of(), work.resolve("version.log")).strip();
        return new CfEngine(work, clientWorkdir, server, version);
    }

    /** @return what {@code cf-agent --version} prints */
    public String version() {
        return version;
    }

    /** @return the server's process id */
    public long pid() {
        return server.pid();
    }

    /**
     * @param source the tree's directory (below the served directory)
     * @return cf-agent syncing from it
     */
    public Contestant agent(Path source) {
        return new Contestant() {
            @Override
            public String name() {
                return "cf-serverd + cf-agent";
            }

            @Override
            public String server() {
                return Servers.CFENGINE;
            }

            @Override
            public void forget() {
                // cf-agent compares digests with the local files: it remembers nothing across runs.
            }

            @Override
            public Outcome sync(Path destination, int port) throws IOException, InterruptedException {
                Path policy = work.resolve("agent-" + policies++ + ".cf");
                Files.writeString(policy, agentPolicy(source, destination, port));
                List<String> command = List.of("cf-agent", "--no-lock", "--file", policy.toString());
                String output = run(command, Map.of(WORKDIR_VARIABLE, clientWorkdir.toString()),
                        work.resolve("agent.log"));
                if (output.contains("error:")) {
                    throw new IOException("cf-agent reported errors: " + output.lines().limit(10).toList());
                }
                return Outcome.UNKNOWN;
            }
        };
    }

    /**
     * Times cf-agent doing nothing but starting and evaluating a policy without promises, which every run of
     * {@link #agent} pays too.
     *
     * @return the wall time of one such run, in milliseconds
     */
    public double emptyRunMillis() throws IOException, InterruptedException {
        Path policy = work.resolve("empty.cf");
        Files.writeString(policy, "body common control { bundlesequence => { \"empty\" }; }\n"
                + "bundle agent empty { }\n");
        long start = System.nanoTime();
        run(List.of("cf-agent", "--no-lock", "--file", policy.toString()),
                Map.of(WORKDIR_VARIABLE, clientWorkdir.toString()), work.resolve("agent.log"));
        return (System.nanoTime() - start) / 1e6;
    }

    @Override
    public void close() {
        Ports.stop(server, Duration.ofSeconds(10));
    }

    private static String generateKey(Path workdir) throws IOException, InterruptedException {
        Files.createDirectories(workdir.resolve("bin"));
        // cf-serverd validates its policy with cf-promises, which it looks for in <workdir>/bin.
        Files.createSymbolicLink(workdir.resolve("bin/cf-promises"), Path.of("/usr/bin/cf-promises"));
        Map<String, String> env = Map.of(WORKDIR_VARIABLE, workdir.toString());
        run(List.of("cf-key"), env, workdir.resolve("cf-key.log"));
        String digest = run(List.of("cf-key", "--print-digest", workdir.resolve("ppkeys/localhost.pub").toString()),
                env, workdir.resolve("cf-key.log")).strip();
        if (!digest.startsWith("MD5=")) {
            throw new IOException("unexpected key digest from cf-key: " + digest);
        }
        return digest;
    }

    /** Runs a command to completion (bounded in time), appending its output to {@code log}; returns the output. */
    private static String run(List<String> command, Map<String, String> env, Path log)
            throws IOException, InterruptedException {
        Path output = Files.createTempFile(log.getParent(), "output-", ".log");
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(output.toFile());
            builder.environment().putAll(env);
            Process process = builder.start();
            if (!process.waitFor(AGENT_RUN_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(command + " did not finish within " + AGENT_RUN_LIMIT);
            }
            String text = Files.readString(output);
            Files.writeString(log, "$ " + String.join(" ", command) + "\n" + text,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            if (process.exitValue() != 0) {
                throw new IOException(command + " exited with " + process.exitValue() + ": " + text);
            }
            return text;
        } finally {
            Files.deleteIfExists(output);
        }
    }

    /** Rudder's server control and access rules (rudder-domain.md §3), reduced to this one client. */
    private static String serverPolicy(Path served, int port, String agentKey) {
        List<String> lines = new ArrayList<>(List.of(
                "body common control { bundlesequence => { \"access_rules\" }; }",
                "body server control {",
                "  port => \"" + port + "\";",
                "  bindtointerface => \"127.0.0.1\";",
                "  allowconnects => { \"127.0.0.1\" };",
                "  allowallconnects => { \"127.0.0.1\" };",
                "  trustkeysfrom => { };",
                "  allowusers => { \"" + System.getProperty("user.name") + "\" };",
                "  allowlegacyconnects => { };",
                "  allowtlsversion => \"1.3\";",
                "  maxconnections => \"1000\";",
                "}",
                "bundle server access_rules {",
                "  access:",
                "    \"" + served + "/\"",
                "      admit_keys => { \"" + agentKey + "\" },",
                "      maproot => { \"127.0.0.1\" };",
                "}"));
        return String.join("\n", lines) + "\n";
    }

    /** Rudder's update.st copy (rudder-domain.md §1.6), from 127.0.0.1:port. */
    private static String agentPolicy(Path source, Path destination, int port) {
        return String.join("\n",
                "body common control { bundlesequence => { \"update\" }; protocol_version => \"2\"; }",
                "body agent control { default_timeout => \"" + AGENT_NETWORK_TIMEOUT_SECONDS + "\"; }",
                "bundle agent update {",
                "  files:",
                "    \"" + destination + "\"",
                "      copy_from => remote(\"127.0.0.1\", \"" + source + "\", \"" + port + "\"),",
                "      depth_search => recurse(\"inf\"),",
                "      action => immediate;",
                "}",
                "body copy_from remote(server, path, port) {",
                "  servers => { \"$(server)\" };",
                "  source => \"$(path)\";",
                "  compare => \"digest\";",
                "  preserve => \"false\";",
                "  verify => \"true\";",
                "  purge => \"true\";",
                "  copy_backup => \"false\";",
                "  portnumber => \"$(port)\";",
                "}",
                "body depth_search recurse(d) { depth => \"$(d)\"; xdev => \"true\"; }",
                "body action immediate { ifelapsed => \"0\"; }",
                "");
    }
}
