package io.pintle.bench.fleet;

import io.pintle.bench.harness.CommandLine;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The simulated agents: {@code fleetagents} (C, OpenSSL; its source is a resource of this jar, built with gcc at
 * each run), one process for the whole fleet, pinned to the agents' CPUs. It reads the node table and the schedule
 * the layout wrote, primes every node's ETags, prints its start time, plays the schedule and writes one line per
 * request to {@code events.tsv}; {@link #update(int)} asks it for an immediate policy update of one node (what a
 * node does when its order channel says its policies changed).
 */
final class FleetAgents implements AutoCloseable {
    private final Process process;
    private final OutputStream stdin;
    private final CompletableFuture<Long> start = new CompletableFuture<>();
    private final List<String> summary = new ArrayList<>();
    private final Path events;

    private FleetAgents(Process process, Path events, PrintStream progress) {
        this.process = process;
        this.stdin = process.getOutputStream();
        this.events = events;
        Thread reader = new Thread(() -> read(process.getInputStream(), progress), "fleetagents-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    static Path build(Path dir) throws IOException, InterruptedException {
        Path source = dir.resolve("fleetagents.c");
        try (InputStream in = FleetAgents.class.getResourceAsStream("fleetagents.c")) {
            if (in == null) {
                throw new IOException("fleetagents.c is not in the bench jar");
            }
            Files.copy(in, source, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        Path binary = dir.resolve("fleetagents");
        Process gcc = new ProcessBuilder("gcc", "-O2", "-o", binary.toString(), source.toString(), "-lssl",
                "-lcrypto", "-lpthread", "-lm").redirectErrorStream(true).start();
        String output = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!gcc.waitFor(120, TimeUnit.SECONDS) || gcc.exitValue() != 0 || !Files.isExecutable(binary)) {
            throw new IOException("gcc could not build fleetagents (apt-get install gcc libssl-dev): " + output);
        }
        return binary;
    }

    static FleetAgents start(Path binary, FleetLayout layout, FleetOptions options, PrintStream progress)
            throws IOException {
        Path events = layout.dir().resolve("agents/events.tsv");
        List<String> command = new ArrayList<>(CommandLine.taskset(options.agentCpus()));
        command.addAll(List.of(binary.toString(), "--nodes", layout.nodesTable().toString(), "--schedule",
                layout.schedule().toString(), "--out", events.toString(), "--threads",
                Integer.toString(options.threads()), "--update-threads", Integer.toString(options.threads()),
                "--prime", "--duration",
                Integer.toString(options.durationSeconds()), "--report-bytes",
                Integer.toString(options.reportBytes()), "--inventory-bytes",
                Integer.toString(options.inventoryBytes())));
        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(layout.dir().resolve("agents/agents.log").toFile()))
                .start();
        return new FleetAgents(process, events, progress);
    }

    private void read(InputStream out, PrintStream progress) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(out, StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                progress.println("fleetagents: " + line);
                if (line.startsWith("start_epoch_ms=")) {
                    start.complete((long) Double.parseDouble(line.substring("start_epoch_ms=".length()).strip()));
                } else {
                    synchronized (summary) {
                        summary.add(line);
                    }
                }
            }
        } catch (IOException e) {
            start.completeExceptionally(e);
        }
        start.completeExceptionally(new IOException("fleetagents ended before it started its schedule"));
    }

    /** @return when the schedule's time 0 is (ms since the epoch), once the prime is done */
    long awaitStart() throws Exception {
        return start.get();
    }

    /** Asks for an immediate policy update of {@code node}. */
    synchronized void update(int node) {
        try {
            stdin.write(("update " + node + "\n").getBytes(StandardCharsets.US_ASCII));
            stdin.flush();
        } catch (IOException e) {
            // The agents have ended: the update is simply not made, and the report shows the node never got it.
        }
    }

    /** Waits for the end of the schedule. */
    boolean waitFor(long seconds) throws InterruptedException {
        return process.waitFor(seconds, TimeUnit.SECONDS);
    }

    int exitValue() {
        return process.exitValue();
    }

    List<String> summary() {
        synchronized (summary) {
            return List.copyOf(summary);
        }
    }

    Path events() {
        return events;
    }

    ProcessHandle handle() {
        return process.toHandle();
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
