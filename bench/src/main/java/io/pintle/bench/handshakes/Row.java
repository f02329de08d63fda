package io.pintle.bench.handshakes;

import io.pintle.server.tls.SelfSigned;
import java.util.Comparator;
import java.util.List;

/**
 * A row's measured windows, summarised.
 *
 * @param mode the trust mode
 * @param serverKey the server key type
 * @param windows its windows, in round order
 */
record Row(Mode mode, SelfSigned.KeyType serverKey, List<Window> windows) {
    /** The generator's core counts as the limit from this busy share up. */
    static final double SATURATED = 0.95;

    Row {
        windows = List.copyOf(windows);
    }

    static List<Row> of(HandshakesResult result) {
        List<Row> rows = new java.util.ArrayList<>();
        for (SelfSigned.KeyType key : result.options.serverKeys()) {
            for (Mode mode : result.options.modes()) {
                List<Window> windows = result.windows.stream()
                        .filter(w -> w.mode() == mode && w.serverKey() == key).toList();
                if (!windows.isEmpty()) {
                    rows.add(new Row(mode, key, windows));
                }
            }
        }
        return rows;
    }

    double median() {
        return median(windows.stream().map(Window::rate).toList());
    }

    double min() {
        return windows.stream().mapToDouble(Window::rate).min().orElse(Double.NaN);
    }

    double max() {
        return windows.stream().mapToDouble(Window::rate).max().orElse(Double.NaN);
    }

    double serverCores() {
        return windows.stream().mapToDouble(Window::serverCores).average().orElse(Double.NaN);
    }

    double serverCoreBusy() {
        return windows.stream().mapToDouble(Window::serverCoreBusy).average().orElse(Double.NaN);
    }

    double generatorCores() {
        return windows.stream().mapToDouble(Window::generatorCores).average().orElse(Double.NaN);
    }

    double generatorCoreBusy() {
        return windows.stream().mapToDouble(Window::generatorCoreBusy).average().orElse(Double.NaN);
    }

    double serverMillisPerHandshake() {
        return median(windows.stream().map(Window::serverMillisPerHandshake).toList());
    }

    /** @return whether the generator's core was saturated (its process share when the core is unknown) */
    boolean generatorLimit() {
        double busy = generatorCoreBusy();
        return (Double.isNaN(busy) ? generatorCores() : busy) >= SATURATED;
    }

    long ok() {
        return windows.stream().mapToLong(Window::ok).sum();
    }

    long connections() {
        return windows.stream().mapToLong(Window::connections).sum();
    }

    long others() {
        return windows.stream().mapToLong(w -> w.others().values().stream().mapToLong(Long::longValue).sum()).sum();
    }

    static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted(Comparator.naturalOrder()).toList();
        int n = sorted.size();
        return n == 0 ? Double.NaN : n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
