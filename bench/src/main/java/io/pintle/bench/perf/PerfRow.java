package io.pintle.bench.perf;

import java.util.Map;

/**
 * One row of the report: the same job against Pintle and nginx (and cf-serverd where comparable).
 *
 * @param label what the row measures
 * @param unit the throughput's unit ({@code req/s}, {@code conn/s}, {@code MB/s}, or a row's own)
 * @param pintle Pintle's figures
 * @param nginx nginx's figures
 * @param cfServerd cf-serverd's figure as printed, or why there is none
 * @param target the target for this row, as printed, or empty
 * @param targetRatio the least Pintle/nginx ratio the target asks for, or NaN when the target is not a ratio
 * @param higherIsBetter whether a larger value is better (false for memory)
 */
record PerfRow(String label, String unit, Cell pintle, Cell nginx, String cfServerd, String target,
        double targetRatio, boolean higherIsBetter) {

    /**
     * One server's figures in a row.
     *
     * @param value the headline figure in the row's unit
     * @param cpuPerUnit the server's CPU per unit of work, in {@code cpuUnit}
     * @param cpuPerUnitNoJit the same without the JIT compiler threads' CPU (a JVM not yet warm)
     * @param cpuUnit e.g. {@code µs/req}
     * @param cpu CPU in cores over the window
     * @param p50Millis median latency, or NaN
     * @param p99Millis 99th percentile latency, or NaN
     * @param errors failed exchanges
     * @param errorKinds failures by description
     */
    record Cell(double value, double cpuPerUnit, double cpuPerUnitNoJit, String cpuUnit, Load.Usage cpu,
            double p50Millis, double p99Millis, long errors, Map<String, Long> errorKinds) {
        /** @return the CPU per unit as printed, e.g. {@code 175 µs/req} */
        String serverCpuPerUnit() {
            return PerfRow.format(cpuPerUnit) + " " + cpuUnit;
        }
    }

    /** @return Pintle's CPU per unit of work over nginx's: how many times more a unit costs Pintle */
    double cpuRatio() {
        return nginx.cpuPerUnit() > 0 ? pintle.cpuPerUnit() / nginx.cpuPerUnit() : Double.NaN;
    }

    /** Three significant digits at most, no more than two decimals. */
    static String format(double value) {
        if (Double.isNaN(value)) {
            return "—";
        }
        double magnitude = Math.abs(value);
        String pattern = magnitude >= 100 ? "%.0f" : magnitude >= 10 ? "%.1f" : "%.2f";
        return String.format(java.util.Locale.ROOT, pattern, value);
    }

    /** @return Pintle's value over nginx's (for memory: nginx's over Pintle's is not used; the plain ratio) */
    double ratio() {
        return nginx.value() > 0 ? pintle.value() / nginx.value() : Double.NaN;
    }

    /** @return whether the target is met, or null when the row has no ratio target */
    Boolean met() {
        if (Double.isNaN(targetRatio)) {
            return null;
        }
        return pintle.errors() == 0 && ratio() >= targetRatio;
    }
}
