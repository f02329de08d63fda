package io.pintle.bench.warmup;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * The report: what ran, a summary per workload and variant (median over the rounds, with the range), whether each
 * variant's gain over the workload's first variant is outside the noise (the rounds' ranges do not overlap), and
 * the rate in every second (median over the rounds).
 */
final class WarmupReport {
    private WarmupReport() {}

    static String render(Map<String, String> context, List<String> notes, List<Curve> curves) {
        StringBuilder md = new StringBuilder("# Warm-up: the rate per second after a cold start (bench/warmup)\n\n");
        context.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("\nSecond k is (k−1, k] seconds after the JVM's spawn (time zero). The rate counts the requests"
                + " ab started in that second and that were answered 2xx. Steady = the median of the last third"
                + " of the seconds (40–60 of 60). Time to 80 % = the first second from which "
                + Curve.SUSTAINED_SECONDS + " seconds in a row reach 80 % of steady. First 5 s = the requests of"
                + " seconds 1–5 over five seconds at the steady rate (the issue's target: time to 80 % ≤ 5 s). CPU"
                + " columns: the share of its core the process used in the steady window (ab at 100 % would be"
                + " the limit); other load: the busy time of Pintle's CPU that was not Pintle's, over the whole run"
                + " (other processes on a shared machine: noise). Cells: median over the rounds"
                + " [lowest–highest].\n\n");
        Map<String, Map<String, List<Curve>>> byWorkload = group(curves);
        md.append("| workload | variant | rounds | listening after (s) | steady (req/s) | time to 80 % (s) | first 5 s"
                + " / steady | Pintle CPU | ab CPU (peak second) | other load on Pintle's CPU | failed |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        byWorkload.forEach((workload, variants) -> variants.forEach((variant, runs) -> md.append(String.format(
                Locale.ROOT, "| %s | %s | %d | %s | %s | %s | %s | %s | %s (%s) | %s | %d |%n", workload, variant,
                runs.size(), cell(runs, c -> c.listenMillis() / 1e3, 2), cell(runs, Curve::steadyRate, 0),
                cell(runs, Curve::secondsTo80, 0), percentCell(runs, Curve::firstSecondsShare),
                percentCell(runs, Curve::serverSteadyCpu), percentCell(runs, Curve::abSteadyCpu),
                percent(runs.stream().mapToDouble(Curve::abPeakCpu).max().orElse(Double.NaN)),
                percentCell(runs, Curve::otherMeanCpu), runs.stream().mapToLong(Curve::failed).sum()))));

        md.append("\n## Against the first variant, per workload\n\n");
        md.append("A gain counts when every round of the variant beats every round of the first variant (the"
                + " ranges do not overlap).\n\n");
        byWorkload.forEach((workload, variants) -> {
            List<Curve> base = variants.values().iterator().next();
            String baseName = variants.keySet().iterator().next();
            variants.forEach((variant, runs) -> {
                if (runs != base) {
                    md.append("- ").append(workload).append(", ").append(variant).append(" vs ").append(baseName)
                            .append(": ").append(compare("first 5 s share", runs, base, Curve::firstSecondsShare,
                                    true))
                            .append("; ").append(compare("listening after", runs, base,
                                    c -> c.listenMillis() / 1e3, false))
                            .append("; ").append(compare("steady rate", runs, base, Curve::steadyRate, true))
                            .append('\n');
                }
            });
        });

        md.append("\n## Requests per second, second by second (median over the rounds)\n\n| s |");
        List<String> columns = new ArrayList<>();
        List<List<Curve>> series = new ArrayList<>();
        byWorkload.forEach((workload, variants) -> variants.forEach((variant, runs) -> {
            columns.add(workload + " " + variant);
            series.add(runs);
        }));
        columns.forEach(c -> md.append(' ').append(c).append(" |"));
        md.append("\n|---:|");
        columns.forEach(c -> md.append("---:|"));
        md.append('\n');
        int seconds = curves.stream().mapToInt(c -> c.perSecond().length).max().orElse(0);
        for (int s = 0; s < seconds; s++) {
            md.append("| ").append(s + 1).append(" |");
            for (List<Curve> runs : series) {
                md.append(' ').append(number(medianAt(runs, s), 0)).append(" |");
            }
            md.append('\n');
        }
        if (!notes.isEmpty()) {
            md.append("\n## Notes\n\n");
            notes.forEach(n -> md.append("- ").append(n).append('\n'));
        }
        return md.toString();
    }

    /** @return the curves by workload, then by variant, each in the order of its first curve */
    static Map<String, Map<String, List<Curve>>> group(List<Curve> curves) {
        Set<String> variantOrder = new LinkedHashSet<>();
        curves.forEach(c -> variantOrder.add(c.variant()));
        Map<String, Map<String, List<Curve>>> byWorkload = new LinkedHashMap<>();
        for (Curve c : curves) {
            byWorkload.computeIfAbsent(c.workload(), w -> {
                Map<String, List<Curve>> m = new LinkedHashMap<>();
                variantOrder.forEach(v -> m.put(v, new ArrayList<>()));
                return m;
            }).get(c.variant()).add(c);
        }
        byWorkload.values().forEach(m -> m.values().removeIf(List::isEmpty));
        return byWorkload;
    }

    static double medianAt(List<Curve> runs, int second) {
        return Curve.median(runs.stream().filter(c -> second < c.perSecond().length)
                .mapToDouble(c -> c.perSecond()[second]).toArray());
    }

    private static String compare(String what, List<Curve> runs, List<Curve> base, ToDoubleFunction<Curve> metric,
            boolean higherIsBetter) {
        double[] v = runs.stream().mapToDouble(metric).toArray();
        double[] b = base.stream().mapToDouble(metric).toArray();
        double vMin = java.util.Arrays.stream(v).min().orElse(Double.NaN);
        double vMax = java.util.Arrays.stream(v).max().orElse(Double.NaN);
        double bMin = java.util.Arrays.stream(b).min().orElse(Double.NaN);
        double bMax = java.util.Arrays.stream(b).max().orElse(Double.NaN);
        double ratio = Curve.median(v) / Curve.median(b);
        String verdict;
        if (higherIsBetter ? vMin > bMax : vMax < bMin) {
            verdict = "better, outside the noise";
        } else if (higherIsBetter ? vMax < bMin : vMin > bMax) {
            verdict = "worse, outside the noise";
        } else {
            verdict = "within the noise";
        }
        return String.format(Locale.ROOT, "%s ×%.2f (%s)", what, ratio, verdict);
    }

    private static String cell(List<Curve> runs, ToDoubleFunction<Curve> metric, int decimals) {
        double[] values = runs.stream().mapToDouble(metric).toArray();
        String median = number(Curve.median(values), decimals);
        if (values.length < 2) {
            return median;
        }
        double min = java.util.Arrays.stream(values).min().orElse(Double.NaN);
        double max = java.util.Arrays.stream(values).max().orElse(Double.NaN);
        if (java.util.Arrays.stream(values).anyMatch(Double::isNaN)) {
            return median + " [" + java.util.Arrays.stream(values).filter(Double::isNaN).count() + " never]";
        }
        return median + " [" + number(min, decimals) + "–" + number(max, decimals) + "]";
    }

    private static String percentCell(List<Curve> runs, ToDoubleFunction<Curve> metric) {
        double[] values = runs.stream().mapToDouble(metric).toArray();
        String median = percent(Curve.median(values));
        if (values.length < 2) {
            return median;
        }
        return median + " [" + percent(java.util.Arrays.stream(values).min().orElse(Double.NaN)) + "–"
                + percent(java.util.Arrays.stream(values).max().orElse(Double.NaN)) + "]";
    }

    static String percent(double share) {
        return Double.isNaN(share) ? "–" : String.format(Locale.ROOT, "%.0f %%", 100 * share);
    }

    static String number(double value, int decimals) {
        if (Double.isNaN(value)) {
            return "never";
        }
        return String.format(Locale.ROOT, "%,." + decimals + "f", value);
    }
}
