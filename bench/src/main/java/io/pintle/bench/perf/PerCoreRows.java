package io.pintle.bench.perf;

import io.pintle.bench.perf.PerCoreBench.Client;
import io.pintle.bench.perf.PerCoreBench.Contender;
import io.pintle.bench.perf.PerCoreBench.Sample;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The rows of issue 23, group by group ({@link PerCoreOptions#ROWS}), each run in interleaved rounds: in round
 * {@code r} the contenders run one after the other, starting with the {@code r}-th, so that none is always first
 * after another's window.
 */
final class PerCoreRows {
    private static final ServerKey[] NEW_CONNECTION_KEYS = {ServerKey.RSA_4096, ServerKey.RSA_2048, ServerKey.ECDSA};

    private final PerCoreBench bench;
    private final PerCoreOptions options;

    PerCoreRows(PerCoreBench bench) {
        this.bench = bench;
        this.options = bench.options();
    }

    /** The generator of one window for one contender. */
    @FunctionalInterface
    private interface Window {
        Sample run(Contender contender) throws Exception;
    }

    void run(String group) throws Exception {
        int seconds = (int) options.window().toSeconds();
        int concurrency = options.newConnectionConcurrency();
        switch (group) {
            case "newconn" -> {
                for (boolean conditional : new boolean[] {true, false}) {
                    for (ServerKey key : NEW_CONNECTION_KEYS) {
                        rate(group, newConnectionLabel(key, Client.EC, conditional, "TCP_NODELAY client"),
                                "tlsconn -n, " + concurrency + " at once", "conn/s", servers(),
                                c -> bench.measure(c, key, bench.tlsconnCommand(c, key, Client.EC, true, concurrency,
                                        conditional, seconds), GeneratorOutput::tlsconn));
                    }
                }
                // As Rudder's agents connect: their RSA-4096 key signs every handshake, on the generator's core.
                ServerKey key = ServerKey.RSA_4096;
                rate(group, newConnectionLabel(key, Client.AGENT, true, "TCP_NODELAY client"),
                        "tlsconn -n, " + concurrency + " at once", "conn/s", servers(),
                        c -> bench.measure(c, key, bench.tlsconnCommand(c, key, Client.AGENT, true, concurrency,
                                true, seconds), GeneratorOutput::tlsconn));
            }
            case "nagle" -> {
                for (ServerKey key : NEW_CONNECTION_KEYS) {
                    rate(group, newConnectionLabel(key, Client.EC, true, "Nagle client (no TCP_NODELAY)"),
                            "ab -E, " + concurrency + " at once", "conn/s", servers(),
                            c -> bench.measure(c, key, bench.abNewConnectionCommand(c, key, Client.EC, seconds),
                                    out -> GeneratorOutput.ab(out, true)));
                }
            }
            case "abmethod" -> {
                // Issue 39's second method, as measured independently: ab -f TLS1.3 -E with an RSA-2048 client
                // certificate against nginx with ssl_verify_client optional_no_ca. Each factor apart: the client
                // key (RSA-2048, EC P-256), nginx's verify mode (both nginx contenders in every row), the generator
                // (ab, Nagle, against tlsconn -n with the EC certificate, bench/perf's own newconn row).
                List<String> names = new ArrayList<>(List.of(PerCoreBench.PINTLE, PerCoreBench.NGINX,
                        PerCoreBench.NGINX_NO_CA));
                if (bench.contenders().containsKey(PerCoreBench.PINTLE_B)) {
                    names.add(PerCoreBench.PINTLE_B);
                }
                for (Client client : new Client[] {Client.RSA_2048, Client.EC}) {
                    for (ServerKey key : NEW_CONNECTION_KEYS) {
                        rate(group, newConnectionLabel(key, client, true, "Nagle client (no TCP_NODELAY), ab -f"
                                        + " TLS1.3"), "ab -f TLS1.3 -E, " + concurrency + " at once", "conn/s", names,
                                c -> bench.measure(c, key, bench.abNewConnectionCommand(c, key, client, true,
                                        seconds), out -> GeneratorOutput.ab(out, true)));
                    }
                }
                for (ServerKey key : NEW_CONNECTION_KEYS) {
                    rate(group, newConnectionLabel(key, Client.EC, true, "TCP_NODELAY client, tlsconn"),
                            "tlsconn -n, " + concurrency + " at once", "conn/s", names,
                            c -> bench.measure(c, key, bench.tlsconnCommand(c, key, Client.EC, true, concurrency,
                                    true, seconds), GeneratorOutput::tlsconn));
                }
            }
            case "firstbyte" -> {
                for (boolean nodelay : new boolean[] {false, true}) {
                    ServerKey key = ServerKey.RSA_4096;
                    String label = "Request → first byte of the answer after the handshake, " + key.title()
                            + " server key, " + Client.AGENT.title() + ", conditional GET, "
                            + (nodelay ? "TCP_NODELAY client" : "Nagle client");
                    latency(group, label, "tlsconn" + (nodelay ? " -n" : "") + ", 1 at a time",
                            c -> bench.measure(c, key, bench.tlsconnCommand(c, key, Client.AGENT, nodelay, 1, true,
                                    seconds), GeneratorOutput::tlsconn));
                }
            }
            case "keepalive" -> {
                ServerKey key = ServerKey.RSA_2048;
                rate(group, "Keep-alive, 1 KiB file, client certificate, HTTP/1.x, 16 connections",
                        "ab -k -E, 16 connections", "req/s", servers(),
                        c -> bench.measure(c, key, bench.abKeepAliveCommand(c, key, seconds),
                                out -> GeneratorOutput.ab(out, false)));
                rate(group, "Keep-alive, 1 KiB file (/common/, no client certificate), HTTP/2, 16 streams",
                        "h2load -c 1 -m 16", "req/s", servers(),
                        c -> bench.measure(c, key, bench.h2loadCommand(c, key, seconds), GeneratorOutput::h2load));
            }
            case "accesslog" -> {
                ServerKey key = ServerKey.RSA_2048;
                List<String> pair = List.of(PerCoreBench.PINTLE_LOG_OFF, PerCoreBench.PINTLE_LOG);
                accessLog(group, "Access log on vs off: keep-alive, 1 KiB file, HTTP/1.x, 16 connections",
                        "ab -k -E, 16 connections", "req/s", pair,
                        c -> bench.measure(c, key, bench.abKeepAliveCommand(c, key, seconds),
                                out -> GeneratorOutput.ab(out, false)));
                accessLog(group, "Access log on vs off: " + newConnectionLabel(key, Client.EC, false,
                        "TCP_NODELAY client"), "tlsconn -n, " + concurrency + " at once", "conn/s", pair,
                        c -> bench.measure(c, key, bench.tlsconnCommand(c, key, Client.EC, true, concurrency, false,
                                seconds), GeneratorOutput::tlsconn));
            }
            case "herd" -> {
                for (int agents : options.herdAgents()) {
                    herd(agents);
                }
            }
            case "warmup" -> bench.add(new PerCoreRow(group, "Warm-up curve: rate per second for the first 60 s"
                    + " after start", "see bench/warmup", PerCoreRow.Kind.ELSEWHERE, "", Map.of(),
                    "Measured by bench/warmup, not here."));
            default -> throw new IllegalArgumentException("no row group " + group);
        }
    }

    private static String newConnectionLabel(ServerKey key, Client certificate, boolean conditional, String client) {
        return "New TLS connection + " + (conditional ? "conditional GET (304)" : "GET 1 KiB (200)") + ", "
                + key.title() + " server key, " + certificate.title() + ", " + client;
    }

    /** Pintle, nginx and pintle-b when it runs. */
    private List<String> servers() {
        List<String> names = new ArrayList<>(List.of(PerCoreBench.PINTLE, PerCoreBench.NGINX));
        if (bench.contenders().containsKey(PerCoreBench.PINTLE_B)) {
            names.add(PerCoreBench.PINTLE_B);
        }
        return names;
    }

    private void rate(String group, String label, String generator, String unit, List<String> names,
            Window window) throws Exception {
        Map<String, List<Sample>> samples = rounds(label, names, window);
        bench.add(new PerCoreRow(group, label, generator, PerCoreRow.Kind.RATE, unit, figures(samples, false), ""));
    }

    private void accessLog(String group, String label, String generator, String unit, List<String> names,
            Window window) throws Exception {
        Map<String, List<Sample>> samples = rounds(label, names, window);
        bench.add(new PerCoreRow(group, label, generator, PerCoreRow.Kind.ACCESS_LOG, unit, figures(samples, false),
                ""));
    }

    private void latency(String group, String label, String generator, Window window)
            throws Exception {
        Map<String, List<Sample>> samples = rounds(label, servers(), window);
        bench.add(new PerCoreRow(group, label, generator, PerCoreRow.Kind.LATENCY, "ms", figures(samples, true),
                ""));
    }

    private Map<String, List<Sample>> rounds(String label, List<String> names, Window window) throws Exception {
        Map<String, List<Sample>> samples = new LinkedHashMap<>();
        names.forEach(name -> samples.put(name, new ArrayList<>()));
        for (int round = 0; round < options.rounds(); round++) {
            for (int i = 0; i < names.size(); i++) {
                String name = names.get((round + i) % names.size());
                Sample sample = window.run(bench.contenders().get(name));
                samples.get(name).add(sample);
                GeneratorOutput out = sample.output();
                bench.progress().printf(Locale.ROOT, "%s, %s, round %d: %.1f/s, first byte p50 %.2f ms, server"
                                + " %.0f %% of a core (core %.0f %% busy), generator %.0f %% (core %.0f %%), %d failed"
                                + " %s%n", label, name, round + 1, out.rate(), out.firstByteP50Millis(),
                        sample.serverShare() * 100, sample.serverCoreBusy() * 100, sample.generatorShare() * 100,
                        sample.generatorCoreBusy() * 100, out.failed(), out.firstError());
            }
        }
        return samples;
    }

    private static Map<String, PerCoreRow.Figures> figures(Map<String, List<Sample>> samples, boolean latency) {
        Map<String, PerCoreRow.Figures> figures = new LinkedHashMap<>();
        samples.forEach((name, list) -> figures.put(name, figures(list, list.stream().map(s -> latency
                ? s.output().firstByteP50Millis() : s.output().rate()).toList(),
                median(list.stream().map(s -> s.output().firstByteP99Millis()).toList()),
                list.stream().mapToLong(s -> s.output().failed()).sum())));
        return figures;
    }

    /** One contender's figures: its rounds' values and p99 as given, the CPU shares from its samples. */
    private static PerCoreRow.Figures figures(List<Sample> list, List<Double> values, double p99, long failed) {
        String first = list.stream().map(s -> s.output().firstError()).filter(e -> !e.isEmpty()).findFirst()
                .orElse("");
        return new PerCoreRow.Figures(median(values), values, p99,
                median(list.stream().map(Sample::cpuPerThousand).toList()),
                median(list.stream().map(Sample::serverShare).toList()),
                median(list.stream().map(Sample::generatorShare).toList()),
                median(list.stream().map(Sample::serverCoreBusy).toList()),
                median(list.stream().map(Sample::generatorCoreBusy).toList()),
                median(list.stream().map(Sample::othersCores).toList()), failed, first);
    }

    static double median(List<Double> values) {
        List<Double> sorted = values.stream().filter(v -> !Double.isNaN(v)).sorted(Comparator.naturalOrder())
                .toList();
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /**
     * The herd (tlsconn's herd mode): {@code agents} agent updates started at an even pace over 10 s on the
     * RSA-4096 server key, each two new connections as rudder-client makes them (the common library with its ETag,
     * 304; the node's policies with the previous generation's, 200 and the archive). The generator presents the EC
     * node's certificate: with the agent's RSA-4096 key, its 4,000 signatures alone would take the generator's core
     * about 20 s, and the row would measure the generator. In interleaved rounds like the others; the latency is
     * per update, from its scheduled start.
     */
    private void herd(int agents) throws Exception {
        ServerKey key = ServerKey.RSA_4096;
        String label = String.format(Locale.ROOT, "Herd: %,d agent updates started over %d s (each 2 new"
                + " connections, %s server key, %s: common library 304, policies 200): latency per update", agents,
                PerCoreBench.HERD_SPREAD.toSeconds(), key.title(), Client.EC.title());
        // Every connection of the herd may wait in the accept queue, be retried by the kernel, and take the 60 s
        // socket timeouts tlsconn sets: the limit leaves room for the slowest update a working server gives.
        java.time.Duration limit = PerCoreBench.HERD_SPREAD.plusSeconds(180);
        Map<String, List<Sample>> samples = new LinkedHashMap<>();
        Map<String, List<GeneratorOutput.Herd>> herds = new LinkedHashMap<>();
        List<String> names = servers();
        names.forEach(name -> {
            samples.put(name, new ArrayList<>());
            herds.put(name, new ArrayList<>());
        });
        for (int round = 0; round < options.rounds(); round++) {
            for (int i = 0; i < names.size(); i++) {
                String name = names.get((round + i) % names.size());
                Contender contender = bench.contenders().get(name);
                GeneratorOutput.Herd[] herd = new GeneratorOutput.Herd[1];
                Sample sample = bench.measure(contender, key, bench.tlsconnHerdCommand(contender, key, agents),
                        out -> {
                            herd[0] = GeneratorOutput.tlsconnHerd(out);
                            return GeneratorOutput.tlsconn(out);
                        }, limit);
                samples.get(name).add(sample);
                herds.get(name).add(herd[0]);
                if (herd[0].errors() > 0) {
                    bench.failed();
                }
                bench.progress().printf(Locale.ROOT, "%s, %s, round %d: p50 %.0f ms, p99 %.0f ms, max %.0f ms, done"
                                + " in %.1f s, connect p99 %.0f ms (max %.0f), %d of %d updates failed %s, server %.0f %%"
                                + " of a core, generator %.0f %%%n", label, name, round + 1, herd[0].p50Millis(),
                        herd[0].p99Millis(), herd[0].maxMillis(), herd[0].completionSeconds(),
                        herd[0].connectP99Millis(), herd[0].connectMaxMillis(), herd[0].errors(), herd[0].agents(),
                        sample.output().firstError(), sample.serverShare() * 100, sample.generatorShare() * 100);
            }
        }
        Map<String, PerCoreRow.Figures> figures = new LinkedHashMap<>();
        StringBuilder comment = new StringBuilder();
        for (String name : names) {
            List<Sample> list = samples.get(name);
            List<GeneratorOutput.Herd> runs = herds.get(name);
            figures.put(name, figures(list, runs.stream().map(GeneratorOutput.Herd::p50Millis).toList(),
                    median(runs.stream().map(GeneratorOutput.Herd::p99Millis).toList()),
                    runs.stream().mapToLong(GeneratorOutput.Herd::errors).sum()));
            comment.append(String.format(Locale.ROOT, "%s%s: lossless ideal p50 %s ms, last update done %s s after"
                            + " the first start, connect p99 %s ms (max %s), failed updates %s, connections never"
                            + " established %s",
                    comment.isEmpty() ? "" : "; ", name,
                    join(list.stream().map(sample -> idealP50Millis(agents,
                            PerCoreBench.HERD_SPREAD.toMillis(), 2 * sample.cpuPerThousand() / 1e3)).toList(), "%.0f"),
                    join(runs.stream().map(GeneratorOutput.Herd::completionSeconds).toList(), "%.1f"),
                    join(runs.stream().map(GeneratorOutput.Herd::connectP99Millis).toList(), "%.0f"),
                    join(runs.stream().map(GeneratorOutput.Herd::connectMaxMillis).toList(), "%.0f"),
                    join(runs.stream().map(h -> (double) h.errors()).toList(), "%.0f"),
                    join(runs.stream().map(h -> (double) h.connectErrors()).toList(), "%.0f")));
        }
        bench.add(new PerCoreRow("herd", label, "tlsconn -n -a " + agents + " (one thread per agent)",
                PerCoreRow.Kind.LATENCY, "ms", figures, String.format(Locale.ROOT, "Herd of %,d, per round: ", agents)
                + comment + ". Server CPU per 1000 is per"
                + " 1000 connections (2 per update). Lossless ideal: the median an update would take if the server,"
                + " at the CPU per connection it spent in that round, finished each agent's two connections before"
                + " the next agent's, losing none (agent i starts at i × spread / agents)."));
    }

    /**
     * The median update latency of a herd served in the ideal lossless order: one server, agents in arrival order,
     * each agent's two connections back to back, at a fixed CPU cost per update.
     *
     * @param agents agents, started at an even pace
     * @param spreadMillis over how long they start
     * @param updateMillis server CPU per update (its two connections)
     * @return the median of (done − start) over the agents, in milliseconds
     */
    static double idealP50Millis(int agents, double spreadMillis, double updateMillis) {
        double[] latencies = new double[agents];
        double done = 0;
        for (int i = 0; i < agents; i++) {
            double start = spreadMillis * i / agents;
            done = Math.max(done, start) + updateMillis;
            latencies[i] = done - start;
        }
        java.util.Arrays.sort(latencies);
        return latencies[agents / 2];
    }

    private static String join(List<Double> values, String format) {
        return String.join(" / ", values.stream().map(v -> String.format(Locale.ROOT, format, v)).toList());
    }
}
