package io.pintle.bench.channels;

import java.util.Arrays;
import java.util.Locale;

/** The Markdown report of one {@code bench/channels} run. */
final class ChannelsReport {
    /** From this share of its one CPU on, the generator counts as the limit of a phase. */
    static final double GENERATOR_LIMIT = 0.85;

    private ChannelsReport() {}

    static String markdown(ChannelsResult r) {
        ChannelsOptions o = r.options;
        StringBuilder md = new StringBuilder();
        md.append("# Order channels at fleet size (bench/channels, issue 21)\n\n");
        md.append("- Date: ").append(r.started).append(" to ").append(r.finished).append('\n');
        md.append("- Commit: ").append(o.commit()).append('\n');
        md.append("- Machine: nproc = ").append(Runtime.getRuntime().availableProcessors())
                .append(" visible to the harness; ").append(System.getProperty("os.name")).append(' ')
                .append(System.getProperty("os.version")).append(", ").append(System.getProperty("java.vm.name"))
                .append(' ').append(System.getProperty("java.runtime.version")).append('\n');
        md.append("- Server: `").append(r.serverCommand).append("` (CPUs ").append(cpus(o.serverCpus()))
                .append("); load generator: this harness's JVM (CPUs ").append(cpus(o.clientCpus()))
                .append("), one NIO thread, one TLS 1.3 connection and client certificate (EC P-256) per node, "
                        + "each from its own 127.1.x.y address, HTTP/1.1; reports "
                + (o.reportContentType() ? "with" : "without") + " `Content-Type: text/plain`\n");
        md.append(String.format(Locale.ROOT, "- Nodes: %,d generated in %.1f s; configuration changed from the demo's: "
                + "`[limits] max_connections` = %,d and `[remote_run] max_channels` = %,d, `[tls] provider = \"%s\"`, "
                + "`[remote_run] transports = [\"pull\"]`, `policy_update_rate = %d`, `policy_update_splay = %d`, "
                + "access log off%n%n", o.nodes(), r.generationSeconds, ChannelsBench.connections(o),
                ChannelsBench.channels(o), o.tlsProvider(), o.rate(),
                o.splaySeconds()));

        md.append("## 1. Parked channels\n\n");
        ProcessSample[] ramp = r.rampServer;
        double rampSeconds = ramp[1].secondsSince(ramp[0]);
        md.append(String.format(Locale.ROOT, "%,d of %,d channels parked (server's `order_channels.polling`) after "
                + "%.1f s of opening, %d handshakes at once (%.0f channels/s); server CPU meanwhile %.2f cores, "
                + "generator %.2f cores. Connection failures: %d%s.%n%n", r.parkedAfterRamp, o.nodes(), rampSeconds,
                o.handshakes(), r.parkedAfterRamp / rampSeconds, ramp[1].coresSince(ramp[0]),
                r.rampClient[1].coresSince(r.rampClient[0]), r.connectFailures,
                r.firstFailure == null ? "" : " (last: " + r.firstFailure + ")"));
        ProcessSample[] is = r.idleServer;
        ProcessSample[] ic = r.idleClient;
        double idleSeconds = is[1].secondsSince(is[0]);
        md.append(String.format(Locale.ROOT, "Idle and parked for %.0f s (%,d polling at its end):%n%n", idleSeconds,
                r.idlePolling));
        md.append("| | RSS | Threads | Open descriptors | CPU over the idle window | CPU per parked channel |\n");
        md.append("|---|---:|---:|---:|---:|---:|\n");
        md.append(String.format(Locale.ROOT, "| Server, at start (no channel) | %s | %d | %,d | – | – |%n",
                mib(r.serverAtStart.rssKib()), r.serverAtStart.threads(), r.serverAtStart.descriptors()));
        md.append(String.format(Locale.ROOT, "| Server, %,d parked | %s | %d | %,d | %.1f ms/s (%.2f%% of a core) | "
                        + "%s of RSS |%n", r.idlePolling, mib(is[1].rssKib()), is[1].threads(), is[1].descriptors(),
                is[1].coresSince(is[0]) * 1000, is[1].coresSince(is[0]) * 100,
                perChannel(is[1].rssKib() - r.serverAtStart.rssKib(), r.idlePolling)));
        md.append(String.format(Locale.ROOT, "| Generator (the harness JVM), %,d held | %s | %d | %,d | %.1f ms/s "
                        + "(loop thread %.1f ms/s) | – |%n%n", r.idlePolling, mib(ic[1].rssKib()), ic[1].threads(),
                ic[1].descriptors(), ic[1].coresSince(ic[0]) * 1000, r.idleLoopCpuMillis / idleSeconds));

        md.append("Server heap at the end of the idle window (`jcmd <pid> GC.heap_info`):\n\n```\n")
                .append(r.idleHeap).append("\n```\n\n");
        md.append("## 2. One order to every node\n\n");
        long[] orders = ChannelsResult.received(r.runOrders);
        long[] reports = ChannelsResult.received(r.runReports);
        md.append("`POST /rudder/relay-api/1/remote-run/all` `{\"command\":\"run\"}` on the admin listener: HTTP ")
                .append(r.runHttpStatus).append(", statuses ").append(r.runStatuses).append(", `done`: `")
                .append(r.doneEvent).append("`.\n\n");
        md.append("| | Value |\n|---|---:|\n");
        md.append(row("POST → `done` event", seconds(r.doneNanos)));
        md.append(row("Nodes that received the order", String.format(Locale.ROOT, "%,d of %,d", orders.length,
                o.nodes())));
        md.append(row("POST → order line at a node, p50", millis(ChannelsResult.quantile(orders, 0.5))));
        md.append(row("POST → order line at a node, p99", millis(ChannelsResult.quantile(orders, 0.99))));
        md.append(row("POST → last node's order line", millis(ChannelsResult.quantile(orders, 1))));
        md.append(row("POST → last node's report answered (204)", millis(ChannelsResult.quantile(reports, 1))));
        md.append(row("Reports answered", String.format(Locale.ROOT, "%,d", reports.length)));
        ProcessSample[] fs = r.fanServer;
        md.append(row("Server CPU, POST to `done`", String.format(Locale.ROOT, "%.1f s (%.2f cores)",
                (fs[1].cpuMillis() - fs[0].cpuMillis()) / 1000, fs[1].coresSince(fs[0]))));
        md.append(row("Generator CPU, same window", String.format(Locale.ROOT, "%.2f cores",
                r.fanClient[1].coresSince(r.fanClient[0]))));
        md.append('\n');

        md.append("The server's heap after `done` (`jcmd <pid> GC.class_histogram`, top; reports ")
                .append(o.reportContentType() ? "with" : "without").append(" `Content-Type`):\n\n```\n")
                .append(r.fanHistogram).append("\n```\n\n");
        md.append("## 3. Policies changed for every node\n\n");
        int[] perSecond = r.updatesPerSecond();
        md.append(String.format(Locale.ROOT, "Every node's `rules/rudder.tar.bz2` rewritten (%.1f s to write them "
                + "all); the server looks every 5 s and releases at most %d update orders a second, spread over "
                + "%d s. Update orders received: %,d of %,d; first %s and last %s after the rewrite began.%n%n",
                r.changeWriteSeconds, o.rate(), o.splaySeconds(), r.updateNanos.length, o.nodes(),
                seconds(r.updateNanos.length == 0 ? -1 : Arrays.stream(r.updateNanos).min().getAsLong()),
                seconds(r.updateNanos.length == 0 ? -1 : Arrays.stream(r.updateNanos).max().getAsLong())));
        md.append(String.format(Locale.ROOT, "Received per second (second 0 starts when the rewrite began), steady "
                + "state (median of the full seconds between the first and the last): %s a second.%n%n",
                steady(perSecond)));
        md.append("| Seconds | +0 | +1 | +2 | +3 | +4 | +5 | +6 | +7 | +8 | +9 |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int from = 0; from < perSecond.length; from += 10) {
            md.append("| ").append(from).append(" | ");
            for (int s = from; s < from + 10; s++) {
                md.append(s < perSecond.length ? Integer.toString(perSecond[s]) : "").append(" | ");
            }
            md.append('\n');
        }
        md.append('\n');
        ProcessSample[] us = r.updServer;
        md.append(String.format(Locale.ROOT, "Server CPU over this phase: %.2f cores; generator: %.2f cores.%n%n",
                us[1].coresSince(us[0]), r.updClient[1].coresSince(r.updClient[0])));

        md.append("## Totals and the generator\n\n");
        long[] t = r.clientTotals;
        md.append(String.format(Locale.ROOT, "Generator totals: %,d order lines, %,d reports answered, %,d polls "
                + "answered 204, %,d unexpected answers (retried after 1 s: %,d), %,d connection failures, %,d "
                + "connections closed by the server%s. Server log: %d ERROR, %d WARN lines. Server at the end: RSS %s, "
                + "%d threads, %,d descriptors; `/v1/status` `order_channels`: `%s`.%n%n", t[0], t[1], t[6], t[3],
                t[2], t[4], t[5], r.lastFailure == null ? "" : " (last: " + r.lastFailure + ")", r.serverLogErrors,
                r.serverLogWarnings, mib(r.serverAtEnd.rssKib()), r.serverAtEnd.threads(),
                r.serverAtEnd.descriptors(), r.finalStatus == null ? "" : r.finalStatus.path("order_channels")));
        md.append("Was the generator the limit? (its share of its one CPU; the limit from ")
                .append(Math.round(GENERATOR_LIMIT * 100)).append("%)\n\n");
        md.append("| Phase | Generator | Server | Other processes on the machine (cores of 2) |\n|---|---:|---:|---:|\n");
        md.append(limitRow("Opening the channels", r.rampClient, r.rampServer));
        md.append(limitRow("Idle, parked", r.idleClient, r.idleServer));
        md.append(limitRow("Order to every node (POST to done)", r.fanClient, r.fanServer));
        md.append(limitRow("Policies changed", r.updClient, r.updServer));
        md.append("\n### Server configuration\n\n```toml\n").append(r.config.strip()).append("\n```\n");
        return md.toString();
    }

    private static String limitRow(String phase, ProcessSample[] client, ProcessSample[] server) {
        double c = client[1].coresSince(client[0]);
        return String.format(Locale.ROOT, "| %s | %.0f%%%s | %.0f%% | %.2f |%n", phase, c * 100,
                c >= GENERATOR_LIMIT ? " (the limit)" : "", server[1].coresSince(server[0]) * 100,
                server[1].othersSince(server[0], client));
    }

    private static String steady(int[] perSecond) {
        int first = -1;
        int last = -1;
        for (int s = 0; s < perSecond.length; s++) {
            if (perSecond[s] > 0) {
                if (first < 0) {
                    first = s;
                }
                last = s;
            }
        }
        if (last - first < 2) {
            return "–";
        }
        int[] full = Arrays.copyOfRange(perSecond, first + 1, last);
        Arrays.sort(full);
        return Integer.toString(full[full.length / 2]);
    }

    private static String row(String name, String value) {
        return "| " + name + " | " + value + " |\n";
    }

    private static String cpus(String cpus) {
        return cpus == null ? "any" : cpus;
    }

    private static String mib(long kib) {
        return String.format(Locale.ROOT, "%,.0f MiB", kib / 1024.0);
    }

    private static String perChannel(long kib, int channels) {
        return channels == 0 ? "–" : String.format(Locale.ROOT, "%.1f KiB", kib / (double) channels);
    }

    private static String millis(long nanos) {
        return nanos < 0 ? "–" : String.format(Locale.ROOT, "%,.0f ms", nanos / 1e6);
    }

    private static String seconds(long nanos) {
        return nanos < 0 ? "–" : String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
    }
}
