package io.pintle.bench.handshakes;

import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** The Markdown report of a run. */
final class HandshakesReport {
    private HandshakesReport() {}

    static String markdown(HandshakesResult r) {
        HandshakesOptions o = r.options;
        StringBuilder md = new StringBuilder();
        List<Row> rows = Row.of(r);
        md.append("# Handshakes: CA chain vs pinned certificate (bench/handshakes)\n\n");
        md.append(f("%s, %.1f min, commit %s. Machine: %s, %d CPUs, %s. Server: Java %s (%s), %s. Generator: %s"
                        + " `s_time -new`, %d processes at once.%n%n", r.started, Duration.between(r.started,
                        r.finished).toSeconds() / 60.0, o.commit(), cpuModel(), cpus(),
                kernel(), Runtime.version(), String.join(" ", o.pintleJvmOptions()),
                o.serverCpus() == null ? "not pinned" : "pinned to CPU " + o.serverCpus(), r.opensslVersion,
                o.parallel()));
        md.append(f("Each connection: a full TLS 1.3 handshake (no resumption) with the client certificate, then"
                + " `GET /policies/<node>/%s` (%d bytes, HTTP/1.0, the server closes). Client keys: %s (both rows;"
                + " the CA chain's root and intermediate too). Rows run interleaved: %d rounds of %d s per row, the"
                + " order rotated each round, after %d s of warm-up per server; one server JVM per row, all on the"
                + " server CPU, one loaded at a time. Generator %s.%n%n", HandshakesLayout.SMALL_FILE,
                HandshakesLayout.SMALL_BYTES, HandshakesLayout.title(o.clientKey()), o.rounds(), o.windowSeconds(),
                o.warmupSeconds(), o.clientCpus() == null ? "not pinned" : "pinned to CPU " + o.clientCpus()));

        md.append("## Results\n\n");
        md.append("| server key | row | handshakes/s (median) | spread (min–max) | server CPU | server CPU per"
                + " handshake | generator CPU (s_time / its core) | generator the limit? | answers |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---|---|\n");
        for (Row row : rows) {
            double spread = (row.max() - row.min()) / row.median() * 100;
            md.append(f("| %s | %s | **%.0f** | %.0f–%.0f (±%.1f %%) | %.0f %% (core %.0f %%) | %.2f ms | %.0f %% / %.0f %%"
                            + " | %s | %,d × 200 of %,d connections%s |%n", HandshakesLayout.title(row.serverKey()),
                    row.mode().label(), row.median(), row.min(), row.max(), spread / 2, row.serverCores() * 100,
                    row.serverCoreBusy() * 100, row.serverMillisPerHandshake(), row.generatorCores() * 100,
                    row.generatorCoreBusy() * 100, row.generatorLimit() ? "**yes**" : "no",
                    row.ok(), row.connections(), row.others() > 0 ? f(", %,d other", row.others()) : ""));
        }
        md.append("\nServer CPU: the server JVM's CPU time over the window (100 % = one core); \"core\": its CPU's"
                + " busy share from /proc/stat, kernel (loopback TCP) included. Generator the limit: its core ≥ 95 %"
                + " busy. Answers: the server's own `pintle_requests_total` on the policy route, read around each"
                + " window.\n\n");

        md.append("### Ratios\n\n| server key | ratio | of medians | per round (paired windows) |\n|---|---|---:|---|\n");
        for (SelfSigned.KeyType key : o.serverKeys()) {
            Optional<Row> pinned = find(rows, Mode.PINNED, key);
            for (Mode mode : List.of(Mode.CA_CHAIN, Mode.BOTH)) {
                Optional<Row> other = find(rows, mode, key);
                if (pinned.isEmpty() || other.isEmpty()) {
                    continue;
                }
                List<String> paired = new ArrayList<>();
                for (Window w : other.get().windows()) {
                    pinned.get().windows().stream().filter(p -> p.round() == w.round()).findFirst()
                            .ifPresent(p -> paired.add(f("%.3f", w.rate() / p.rate())));
                }
                md.append(f("| %s | %s / pinned | **%.3f** | %s |%n", HandshakesLayout.title(key), mode.label(),
                        other.get().median() / pinned.get().median(), String.join(", ", paired)));
            }
        }

        long disturbed = r.windows.stream().filter(w -> w.otherCores() > HandshakesBench.DISTURBED).count();
        long repeated = r.windows.stream().filter(w -> w.attempts() > 1).count();
        md.append(f("%nOther processes on the machine (builds, tests of other sessions): before each window the harness"
                + " waits until they take under %.2f of a core; a window during which they took more than %.2f is"
                + " run again (up to 3 times). Windows repeated: %d; kept although disturbed: %d (see the last"
                + " columns below).%n", HandshakesBench.QUIET, HandshakesBench.DISTURBED, repeated, disturbed));
        md.append("\n### Every window\n\n| server key | row | round | connections | s | handshakes/s | 200 | other |"
                + " TLS 1.3 handshakes | server CPU | server core | s_time CPU | generator core | other processes |"
                + " attempts |\n|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Window w : r.windows) {
            md.append(f("| %s | %s | %d | %,d | %.1f | %.1f | %,d | %s | %,d | %.0f %% | %.0f %% | %.0f %% | %.0f %% |"
                            + " %.2f cores | %d |%n",
                    HandshakesLayout.title(w.serverKey()), w.mode().label(), w.round(), w.connections(), w.seconds(),
                    w.rate(), w.ok(), w.others().isEmpty() ? "—" : w.others().toString(), w.tls13(),
                    w.serverCores() * 100, w.serverCoreBusy() * 100, w.generatorCores() * 100,
                    w.generatorCoreBusy() * 100, w.otherCores(), w.attempts()));
            for (String failure : w.failures()) {
                md.append("|  |  |  | ").append(failure.replace('|', '/')).append(" |||||||||||\n");
            }
        }

        if (!r.profiles.isEmpty()) {
            md.append(f("%n## Where the server's CPU goes (JFR, %s server key, %d s per row)%n%n",
                    HandshakesLayout.title(o.serverKeys().get(0)), o.profileSeconds()));
            md.append("Java execution samples (JFR `profile` settings, every 10 ms) during one more window of the"
                    + " same load per row. Inclusive share: samples with the frame anywhere on the stack. The TLS"
                    + " handshake itself runs in Conscrypt's BoringSSL (native code), which JFR does not sample: the"
                    + " Java samples cover the rest of the server's work.\n\n");
            md.append("| frame (inclusive) |");
            r.profiles.keySet().forEach(m -> md.append(' ').append(m.label()).append(" |"));
            md.append("\n|---|");
            r.profiles.keySet().forEach(m -> md.append("---:|"));
            md.append('\n');
            md.append("| *Java execution samples (handshakes/s during the recording)* |");
            r.profiles.values().forEach(h -> md.append(f(" %,d (%.0f/s) |", h.samples(), h.window().rate())));
            md.append('\n');
            md.append("| *server CPU per handshake in the recording window* |");
            r.profiles.values().forEach(h -> md.append(f(" %.2f ms |", h.window().serverMillisPerHandshake())));
            md.append('\n');
            md.append("| *`CaTrust.verify`, CPU per handshake (samples × 10 ms / handshakes)* |");
            r.profiles.values().forEach(h -> md.append(f(" %.2f ms |", h.verifyMillisPerHandshake())));
            md.append('\n');
            Hotspots any = r.profiles.values().iterator().next();
            for (String frame : any.inclusive().keySet()) {
                md.append("| `").append(frame).append("` |");
                r.profiles.values().forEach(h -> md.append(f(" %.1f %% |", h.inclusive().get(frame) * 100)));
                md.append('\n');
            }
            for (Map.Entry<Mode, Hotspots> entry : r.profiles.entrySet()) {
                md.append(f("%nTop of stack (self), %s:%n%n", entry.getKey().label()));
                entry.getValue().topSelf().forEach((frame, share) -> md.append(f("- %.1f %% `%s`%n", share * 100,
                        frame)));
                if (entry.getKey().chainClient() && entry.getValue().inclusive().get(Hotspots.VERIFY) > 0) {
                    md.append(f("%nTop of stack within `CaTrust.verify`, %s (share of those samples):%n%n",
                            entry.getKey().label()));
                    entry.getValue().topInVerify().forEach((frame, share) -> md.append(f("- %.1f %% `%s`%n",
                            share * 100, frame)));
                }
            }
        }
        if (r.costs != null) {
            md.append("\n## The chain verification alone (in process)\n\n");
            md.append("Timed in the harness's JVM (same JDK, one thread on the generator CPU, servers stopped), on"
                    + " this run's certificates (`VerificationCosts`):\n\n").append(r.costs.table());
        }

        md.append("\n## Checks before measuring\n\n");
        r.checks.forEach(c -> md.append("- ").append(c).append('\n'));
        md.append(f("%nServer logs: %d ERROR line(s).%n", r.serverLogErrors));

        md.append("\n## Commands and configuration\n\n");
        md.append("Server (one per row and server key; the config file differs):\n\n```\n").append(r.serverCommand)
                .append("\n```\n\nGenerator, per row (").append(o.parallel()).append(" at once):\n\n```\n");
        r.generatorCommands.forEach((mode, command) -> md.append("# ").append(mode.label()).append('\n')
                .append(command).append('\n'));
        md.append("```\n\n`[nodes]` of each row (the rest is `pintle demo`'s, with the access log off):\n\n```toml\n");
        r.configs.forEach((mode, config) -> md.append("# ").append(mode.label()).append(" (")
                .append(r.configFiles.get(mode)).append(")\n").append(nodesTable(config)).append('\n'));
        md.append("```\n");
        return md.toString();
    }

    private static Optional<Row> find(List<Row> rows, Mode mode, SelfSigned.KeyType key) {
        return rows.stream().filter(r -> r.mode() == mode && r.serverKey() == key).findFirst();
    }

    private static String nodesTable(String config) {
        int start = config.indexOf("[nodes]");
        int end = config.indexOf("\n[", start + 1);
        return start < 0 ? "?" : config.substring(start, end < 0 ? config.length() : end).strip();
    }

    private static String cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .findFirst().map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("?");
        } catch (IOException e) {
            return "?";
        }
    }

    private static long cpus() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("processor"))
                    .count();
        } catch (IOException e) {
            return Runtime.getRuntime().availableProcessors();
        }
    }

    private static String kernel() {
        return "Linux " + System.getProperty("os.version");
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
