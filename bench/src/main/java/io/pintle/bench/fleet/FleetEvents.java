package io.pintle.bench.fleet;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the agents did, read from {@code events.tsv} (one line per request, written by fleetagents): requests by
 * kind, agent runs (the requests of one node's run: two policy GETs and its report PUTs), inventories, and what
 * came of a generation.
 */
final class FleetEvents {
    /** One request. Times in ms since the epoch. */
    record Request(double sched, double start, double connected, double handshake, double end, int node, String kind,
            int status, long bytes, boolean newEtag, String error) {
        boolean ok() {
            if (status == 0 || !error.equals("-")) {
                return false;
            }
            return switch (kind) {
                case "prime-common", "prime-policies", "common", "policies", "update-common", "update-policies" ->
                        status == 200 || status == 304;
                default -> status >= 200 && status < 300;
            };
        }
    }

    /** A run, an inventory or an update: the requests one agent made for one scheduled start. */
    record Task(String what, int node, double sched, double end, boolean ok, String firstError, int requests) {}

    final List<Request> requests;
    final List<Task> runs = new ArrayList<>();
    final List<Task> inventories = new ArrayList<>();
    final List<Task> updates = new ArrayList<>();

    private FleetEvents(List<Request> requests) {
        this.requests = requests;
        Map<String, List<Request>> grouped = new LinkedHashMap<>();
        for (Request request : requests) {
            String what = task(request.kind);
            if (what != null) {
                grouped.computeIfAbsent(what + "\t" + request.node + "\t" + request.sched, k -> new ArrayList<>())
                        .add(request);
            }
        }
        for (Map.Entry<String, List<Request>> entry : grouped.entrySet()) {
            String what = entry.getKey().substring(0, entry.getKey().indexOf('\t'));
            List<Request> parts = entry.getValue();
            boolean ok = true;
            String firstError = "";
            double end = 0;
            for (Request part : parts) {
                end = Math.max(end, part.end);
                if (ok && !part.ok()) {
                    ok = false;
                    firstError = part.kind + " " + (!part.error.equals("-") ? part.error : "HTTP " + part.status);
                }
            }
            // A run always ends with its report (an agent reports even when its update failed): one without was cut
            // short by the end of the agents.
            if (ok && what.equals("run") && parts.stream().noneMatch(p -> p.kind.equals("report"))) {
                ok = false;
                firstError = "cut short (no report sent)";
            }
            Task task = new Task(what, parts.get(0).node, parts.get(0).sched, end, ok, firstError, parts.size());
            switch (what) {
                case "run" -> runs.add(task);
                case "inventory" -> inventories.add(task);
                default -> updates.add(task);
            }
        }
        runs.sort((a, b) -> Double.compare(a.sched, b.sched));
    }

    private static String task(String kind) {
        return switch (kind) {
            case "common", "policies", "report" -> "run";
            case "uuid", "inventory", "inventory-sign" -> "inventory";
            case "update-common", "update-policies" -> "update";
            default -> null;
        };
    }

    static FleetEvents read(Path file) throws IOException {
        List<Request> requests = new ArrayList<>();
        try (BufferedReader reader = Files.newBufferedReader(file)) {
            String line;
            while ((line = reader.readLine()) != null) {
                String[] f = line.split("\t", 11);
                if (f.length < 11) {
                    continue; // a line cut by the end of the run
                }
                requests.add(new Request(Double.parseDouble(f[0]), Double.parseDouble(f[1]),
                        Double.parseDouble(f[2]), Double.parseDouble(f[3]), Double.parseDouble(f[4]),
                        Integer.parseInt(f[5]), f[6], Integer.parseInt(f[7]), Long.parseLong(f[8]),
                        f[9].equals("1"), f[10]));
            }
        }
        return new FleetEvents(requests);
    }

    /** Latency figures of a set of requests or tasks, in ms. */
    record Figures(int count, int failed, double p50, double p99, double max) {
        static Figures of(List<double[]> latencyAndOk) {
            double[] values = latencyAndOk.stream().filter(v -> v[1] > 0).mapToDouble(v -> v[0]).sorted()
                    .toArray();
            int failed = (int) latencyAndOk.stream().filter(v -> v[1] == 0).count();
            return new Figures(latencyAndOk.size(), failed, percentile(values, 0.50), percentile(values, 0.99),
                    values.length == 0 ? Double.NaN : values[values.length - 1]);
        }
    }

    static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    /**
     * Requests by kind scheduled in [from, to) ms since the epoch: latency from the scheduled start of their run to
     * their last byte ({@code fromSchedule}) or from their own connect to their last byte.
     */
    Map<String, Figures> byKind(double from, double to, boolean fromSchedule) {
        Map<String, List<double[]>> values = new TreeMap<>();
        for (Request r : requests) {
            if (r.sched >= from && r.sched < to) {
                values.computeIfAbsent(r.kind, k -> new ArrayList<>())
                        .add(new double[] {r.end - (fromSchedule ? r.sched : r.start), r.ok() ? 1 : 0});
            }
        }
        Map<String, Figures> figures = new LinkedHashMap<>();
        for (String kind : List.of("prime-common", "prime-policies", "common", "policies", "report", "uuid",
                "inventory", "inventory-sign", "update-common", "update-policies")) {
            if (values.containsKey(kind)) {
                figures.put(kind, Figures.of(values.get(kind)));
            }
        }
        return figures;
    }

    /**
     * @return the runs (or inventories) under way at some moment of [from, to) (scheduled before its end and ended
     *     after its start): latency from schedule to the last request's end, of the successful ones
     */
    static Figures tasks(List<Task> tasks, double from, double to) {
        List<double[]> values = new ArrayList<>();
        for (Task t : tasks) {
            if (t.sched < to && t.end >= from) {
                values.add(new double[] {t.end - t.sched, t.ok ? 1 : 0});
            }
        }
        return Figures.of(values);
    }

    /** @return failed tasks under way in [from, to) by their first error, most frequent first */
    static Map<String, Integer> failures(List<Task> tasks, double from, double to) {
        Map<String, Integer> counts = new HashMap<>();
        for (Task t : tasks) {
            if (!t.ok && t.sched < to && t.end >= from) {
                counts.merge(t.firstError, 1, Integer::sum);
            }
        }
        Map<String, Integer> sorted = new LinkedHashMap<>();
        counts.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue())
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }

    /**
     * For each failed run, whether the same node's next run (scheduled later) succeeded: what a real agent's next
     * run would do (rudder-client passes no --retry to curl; a report that could not be sent stays in
     * reports/ready and goes with the next run).
     *
     * @return {failed runs, of them followed by a successful next run, of them with no later run in the window}
     */
    int[] retriedByNextRun() {
        Map<Integer, List<Task>> byNode = new HashMap<>();
        for (Task t : runs) {
            byNode.computeIfAbsent(t.node, k -> new ArrayList<>()).add(t);
        }
        int failed = 0;
        int recovered = 0;
        int noNext = 0;
        for (List<Task> list : byNode.values()) {
            for (int i = 0; i < list.size(); i++) {
                if (!list.get(i).ok) {
                    failed++;
                    if (i + 1 == list.size()) {
                        noNext++;
                    } else if (list.get(i + 1).ok) {
                        recovered++;
                    }
                }
            }
        }
        return new int[] {failed, recovered, noNext};
    }

    /**
     * When each node first downloaded new policies after {@code generation} (ms since the epoch): a policies GET
     * (scheduled or an update) answered 200 with an ETag other than the one the node had.
     *
     * @return for each node, ms from the generation, or NaN if it never did
     */
    double[] propagation(int nodes, double generation) {
        double[] got = new double[nodes];
        Arrays.fill(got, Double.NaN);
        for (Request r : requests) {
            if ((r.kind.equals("policies") || r.kind.equals("update-policies")) && r.status == 200 && r.newEtag
                    && r.end > generation && r.ok()) {
                double after = r.end - generation;
                if (Double.isNaN(got[r.node]) || after < got[r.node]) {
                    got[r.node] = after;
                }
            }
        }
        return got;
    }

    /**
     * Per {@code binMillis} from {@code origin}: runs scheduled, runs whose first request started, requests
     * started, failed runs (by schedule), p50 and p99 of run latency (by schedule).
     */
    List<double[]> timeline(double origin, double binMillis, double until) {
        int bins = (int) Math.ceil((until - origin) / binMillis);
        List<List<Double>> latencies = new ArrayList<>();
        double[][] counts = new double[Math.max(bins, 0)][4];
        for (int i = 0; i < bins; i++) {
            latencies.add(new ArrayList<>());
        }
        for (Task t : runs) {
            int bin = (int) ((t.sched - origin) / binMillis);
            if (bin >= 0 && bin < bins) {
                counts[bin][0]++;
                if (t.ok) {
                    latencies.get(bin).add(t.end - t.sched);
                } else {
                    counts[bin][3]++;
                }
            }
        }
        for (Request r : requests) {
            int bin = (int) ((r.start - origin) / binMillis);
            if (bin >= 0 && bin < bins && !r.kind.startsWith("prime")) {
                counts[bin][2]++;
                if (r.kind.equals("common")) {
                    counts[bin][1]++;
                }
            }
        }
        List<double[]> rows = new ArrayList<>();
        for (int i = 0; i < bins; i++) {
            double[] sorted = latencies.get(i).stream().mapToDouble(Double::doubleValue).sorted().toArray();
            rows.add(new double[] {i * binMillis / 1000.0, counts[i][0], counts[i][1], counts[i][2], counts[i][3],
                    percentile(sorted, 0.5), percentile(sorted, 0.99)});
        }
        return rows;
    }
}
