package io.pintle.bench.uploads;

import io.pintle.bench.harness.ReportOutput;
import io.pintle.bench.perf.Load;
import io.pintle.bench.sync.ProcessCpu;
import io.pintle.bench.harness.HarnessMain;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Entry point of {@code bench/uploads} (issue 19): lays out {@code pintle demo}'s files plus 1,000 agent reports
 * and one htpasswd file, starts Pintle (when its demo has an {@code [uploads]} table) and nginx's WebDAV
 * {@code PUT}, both pinned to one CPU, warms both up, then runs every row against both, alternating which goes
 * first, and writes a Markdown report and a plot into the output directory.
 *
 * <p>Exit status: 0 when every upload of every cell succeeded and arrived complete, 1 otherwise, 2 when the
 * harness could not run.
 */
public final class UploadBench {
    private final UploadOptions options;
    private final PrintStream progress;

    private UploadBench(UploadOptions options, PrintStream progress) {
        this.options = options;
        this.progress = progress;
    }

    /** @param args see {@link UploadOptions#USAGE} */
    public static void main(String[] args) {
        System.exit(HarnessMain.run(args, UploadOptions::parse, "uploads harness",
                options -> new UploadBench(options, System.err).run()));
    }

    private int run() throws Exception {
        Instant date = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        long start = System.nanoTime();
        String loadBefore = Files.readString(Path.of("/proc/loadavg")).strip();
        Path work = options.work();
        Files.createDirectories(options.output());
        UploadLayout layout = UploadLayout.create(work.resolve("layout"), options.uploads(), options.reportBytes());
        progress.printf("layout in %s: %,d reports of %,d bytes; htpasswd %s%n", work, layout.names().size(),
                options.reportBytes(), layout.hashScheme());
        List<UploadTarget> targets = new ArrayList<>();
        List<Cell> cells = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        Thread stopServers = new Thread(() -> targets.forEach(UploadBench::closeQuietly), "stop-servers");
        Runtime.getRuntime().addShutdownHook(stopServers);
        try {
            if (layout.pintleReports().isPresent()) {
                targets.add(UploadTarget.pintle(layout, options, work));
            } else {
                notes.add("Pintle was not run: its demo configuration (`pintle demo`) has no `[uploads]` table, so"
                        + " this build of Pintle does not take uploads. Only nginx's figures are in this report.");
                progress.println("Pintle skipped: no [uploads] table in the demo's configuration");
            }
            targets.add(UploadTarget.nginx(layout, options, work));
            for (UploadTarget target : targets) {
                progress.printf("%s on 127.0.0.1:%d (pids %s)%n", target.name(), target.port(),
                        target.processes().get().stream().map(p -> Long.toString(p.pid())).toList());
            }
            copyConfigurations(work);
            warmUp(layout, targets, work);
            int index = 0;
            for (UploadOptions.Row row : options.rows()) {
                List<UploadTarget> order = new ArrayList<>(targets);
                if (index++ % 2 == 1) {
                    java.util.Collections.reverse(order);
                }
                for (UploadTarget target : order) {
                    Cell cell = runCell(row, layout, target, work.resolve("cells").resolve(index + "-"
                            + row.generator().name().toLowerCase(Locale.ROOT) + "-" + row.concurrency() + "-"
                            + target.name().toLowerCase(Locale.ROOT)), options.uploads());
                    cells.add(cell);
                    progress.printf(Locale.ROOT, "%-50s %-6s %7.1f uploads/s, p50 %.2f ms, p99 %.2f ms, server"
                                    + " %.2f ms/upload, generator %.0f%% of its CPU, others %.2f cores, files %s,"
                                    + " errors %d%n", row.label(), target.name(), cell.rate(),
                            cell.outcome().p50Millis(), cell.outcome().p99Millis(), cell.serverCpuPerUpload(),
                            100 * cell.generatorShare(), cell.otherCores(), cell.destination().summary(),
                            cell.outcome().errorCount());
                }
            }
        } finally {
            for (UploadTarget target : targets) {
                closeQuietly(target);
            }
            Runtime.getRuntime().removeShutdownHook(stopServers);
        }
        String loadAfter = Files.readString(Path.of("/proc/loadavg")).strip();
        double minutes = (System.nanoTime() - start) / 6e10;
        UploadReport.Context context = new UploadReport.Context(date, minutes, options, layout, targets, loadBefore,
                loadAfter, notes);
        String markdown = UploadReport.render(context, cells);
        ReportOutput.publish(markdown, null, progress);
        Files.writeString(options.output().resolve("report.md"), markdown);
        UploadReport.plot(context, cells, options.output().resolve("plot.png"));
        progress.println("report and plot written to " + options.output());
        boolean clean = !cells.isEmpty() && cells.stream().allMatch(c -> c.outcome().errorCount() == 0
                && c.outcome().ok() == c.uploads() && c.destination().clean());
        return clean ? 0 : 1;
    }

    /** Unmeasured uploads to every server, so that Pintle's JIT has compiled both request shapes first. */
    private void warmUp(UploadLayout layout, List<UploadTarget> targets, Path work) throws Exception {
        if (options.warmup() == 0) {
            return;
        }
        for (UploadTarget target : targets) {
            long begin = System.nanoTime();
            List<UploadOptions.Row> rows = List.of(new UploadOptions.Row(Generator.Kind.AB, 8),
                    new UploadOptions.Row(Generator.Kind.CURL, 8));
            for (UploadOptions.Row row : rows) {
                int uploads = row.generator() == Generator.Kind.AB ? options.warmup()
                        : Math.min(layout.names().size(), options.warmup());
                Path cell = Files.createDirectories(work.resolve("warmup").resolve(target.name() + "-"
                        + row.generator().name().toLowerCase(Locale.ROOT)));
                Generator.run(Generator.command(row, layout, target, uploads, cell), layout, cell,
                        options.cellTimeoutSeconds());
                Destination.checkAndClear(target, layout, List.of());
            }
            progress.printf(Locale.ROOT, "%s warmed up: %,d uploads with ab -c 8, %,d with curl -Z 8, %.1f s%n",
                    target.name(), options.warmup(), Math.min(layout.names().size(), options.warmup()),
                    (System.nanoTime() - begin) / 1e9);
        }
    }

    private Cell runCell(UploadOptions.Row row, UploadLayout layout, UploadTarget target, Path cell, int uploads)
            throws Exception {
        Files.createDirectories(cell);
        Destination.checkAndClear(target, layout, List.of());
        List<String> command = Generator.command(row, layout, target, uploads, cell);
        List<ProcessHandle> server = target.processes().get();
        double serverBefore = ProcessCpu.millis(server);
        double systemBefore = ProcessCpu.systemMillis(server);
        double jitBefore = Load.jvmThreadsMillis(server)[0];
        double generatorBefore = ProcessCpu.childrenMillis();
        double machineBefore = ProcessCpu.machineBusyMillis();
        long begin = System.nanoTime();
        int exit = Generator.run(command, layout, cell, options.cellTimeoutSeconds());
        double wall = (System.nanoTime() - begin) / 1e9;
        double serverCpu = ProcessCpu.millis(server) - serverBefore;
        double serverSystem = ProcessCpu.systemMillis(server) - systemBefore;
        double serverJit = Load.jvmThreadsMillis(server)[0] - jitBefore;
        double generatorCpu = ProcessCpu.childrenMillis() - generatorBefore;
        double machine = ProcessCpu.machineBusyMillis() - machineBefore;
        Generator.Outcome outcome = Generator.read(row, cell, uploads, exit);
        List<String> names = row.generator().distinctNames() ? layout.names().subList(0, uploads)
                : List.of(layout.names().get(0));
        Destination destination = Destination.checkAndClear(target, layout, names);
        if (Files.exists(cell.resolve("stdout.txt")) && !row.generator().distinctNames()) {
            Path raw = Files.createDirectories(options.output().resolve("ab"));
            Files.copy(cell.resolve("stdout.txt"), raw.resolve(cell.getFileName() + ".txt"));
        }
        return new Cell(target.name(), row, uploads, outcome, destination, wall, serverCpu, serverSystem, serverJit,
                generatorCpu, machine,
                Generator.describe(command, layout, options.work()));
    }

    /** The servers' configurations go beside the report. */
    private void copyConfigurations(Path work) throws IOException {
        Path nginx = work.resolve("nginx/nginx.conf");
        if (Files.exists(nginx)) {
            Files.copy(nginx, options.output().resolve("nginx.conf"));
        }
        try (Stream<Path> files = Files.list(work.resolve("layout"))) {
            for (Path file : files.filter(f -> f.getFileName().toString().equals("pintle-uploads.toml")).toList()) {
                Files.copy(file, options.output().resolve("pintle.toml"));
            }
        }
    }

    private static void closeQuietly(UploadTarget target) {
        try {
            target.close();
        } catch (RuntimeException e) {
            System.err.println("stopping " + target.name() + ": " + e);
        }
    }
}
