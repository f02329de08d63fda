package io.pintle.bench.forwarding;

import io.pintle.bench.plot.Axes;
import io.pintle.bench.plot.Canvas;
import java.awt.Color;
import java.awt.Graphics2D;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * bench/forwarding's plot, three panels: (a) uploads/s per round with verification on and off; (b)(i) the drain's
 * files/s (from the first arrival) per {@code forward_in_flight}; (b)(ii) the sorted relay-to-root delays, a
 * percentile curve. Usage: {@code ForwardingPlot edge.tsv drain.tsv latency.tsv out.png} (the script's files).
 */
public final class ForwardingPlot {
    private static final Color ON = new Color(0xc0392b);
    private static final Color OFF = new Color(0x2e86c1);
    private static final int TOP = 70;
    private static final int BOTTOM = 430;

    private ForwardingPlot() {}

    public static void main(String[] args) throws Exception {
        List<String[]> edge = rows(Path.of(args[0]));
        List<String[]> drain = rows(Path.of(args[1]));
        List<Double> delays = new ArrayList<>();
        for (String[] r : rows(Path.of(args[2]))) {
            if (!r[0].equals("name") && !r[4].equals("NaN")) {
                delays.add(Double.parseDouble(r[4]));
            }
        }
        delays.sort(null);
        Canvas.writePng(1260, 500, "Edge check cost (a) and relay forwarding (b)", g -> {
            bars(g, 70, 420, "(a) uploads/s, verify on (red) / off (blue)", edge, r -> r[0] + " " + r[1], 5,
                    r -> r[1].equals("on") ? ON : OFF);
            bars(g, 490, 800, "(b)(i) drain files/s (from first arrival)", drain,
                    r -> r[0].replace(", root defaults", "").replace(", root per_address 64", ", 64/addr")
                            + (r[9].equals("-") ? " stalled" : ""), 9,
                    r -> new Color(0x27ae60));
            curve(g, 870, 1220, "(b)(ii) on relay to on root (ms), by percentile", delays);
        }, Path.of(args[3]));
    }

    private static List<String[]> rows(Path file) throws java.io.IOException {
        return Files.readAllLines(file).stream().filter(l -> !l.isBlank()).map(l -> l.split("\t")).toList();
    }

    private static void bars(Graphics2D g, int left, int right, String title, List<String[]> rows,
            java.util.function.Function<String[], String> label, int column,
            java.util.function.Function<String[], Color> colour) {
        g.setColor(Color.BLACK);
        g.drawString(title, left, TOP - 20);
        double max = rows.stream().mapToDouble(r -> value(r[column])).max().orElse(1);
        double axis = Axes.niceCeil(Math.max(max, 1));
        Axes.frame(g, left, right, TOP, BOTTOM, axis);
        int slot = (right - left) / Math.max(rows.size(), 1);
        for (int i = 0; i < rows.size(); i++) {
            String[] r = rows.get(i);
            int h = (int) Math.round(value(r[column]) / axis * (BOTTOM - TOP));
            int x = left + i * slot + 4;
            g.setColor(colour.apply(r));
            g.fillRect(x, BOTTOM - h, slot - 8, h);
            g.setColor(Color.BLACK);
            g.drawString(String.format(Locale.ROOT, "%.0f", value(r[column])), x, BOTTOM - h - 4);
            g.drawString(label.apply(r), x, BOTTOM + 16);
        }
    }

    private static void curve(Graphics2D g, int left, int right, String title, List<Double> sorted) {
        g.setColor(Color.BLACK);
        g.drawString(title, left, TOP - 20);
        if (sorted.isEmpty()) {
            return;
        }
        double axis = Axes.niceCeil(Math.max(sorted.get(sorted.size() - 1), 1));
        Axes.frame(g, left, right, TOP, BOTTOM, axis);
        g.setColor(new Color(0x8e44ad));
        int px = -1;
        int py = -1;
        for (int i = 0; i < sorted.size(); i++) {
            int x = left + (int) ((right - left) * (i + 1.0) / sorted.size());
            int y = BOTTOM - (int) Math.round(sorted.get(i) / axis * (BOTTOM - TOP));
            if (px >= 0) {
                g.drawLine(px, py, x, y);
            }
            px = x;
            py = y;
        }
        g.setColor(Color.BLACK);
        g.drawString("0 %", left, BOTTOM + 16);
        g.drawString("50 %", (left + right) / 2 - 12, BOTTOM + 16);
        g.drawString("100 %", right - 30, BOTTOM + 16);
    }

    private static double value(String text) {
        try {
            return Double.parseDouble(text);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
