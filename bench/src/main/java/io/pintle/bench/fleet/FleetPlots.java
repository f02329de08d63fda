package io.pintle.bench.fleet;

import io.pintle.bench.plot.Axes;
import io.pintle.bench.plot.Canvas;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.Stroke;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** The fleet report's plots: run latency over time, a generation's propagation, CPU and memory per process. */
final class FleetPlots {
    private static final int WIDTH = 1000;
    private static final int LEFT = 80;
    private static final int RIGHT = WIDTH - 200;
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
            new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f)};
    private static final Color MARK = new Color(0xaaaaaa);

    private FleetPlots() {}

    /** Timeline rows as {@link FleetEvents#timeline}: [seconds, scheduled, started, requests, failed, p50, p99]. */
    static void latency(Path file, List<double[]> rows, Map<String, Double> marks, String title) throws IOException {
        Canvas.writePng(WIDTH, 560, title, g -> {
            double maxTime = Axes.niceCeil(rows.isEmpty() ? 1 : rows.get(rows.size() - 1)[0] + 10);
            double maxLatency = Axes.niceCeil(Math.max(1, rows.stream().mapToDouble(r -> Double.isNaN(r[6]) ? 0 : r[6])
                    .max().orElse(1)));
            int top = 60;
            int bottom = 300;
            Axes.frame(g, LEFT, RIGHT, top, bottom, maxLatency);
            g.drawString("ms", 20, top - 8);
            line(g, rows, r -> r[5], maxTime, maxLatency, top, bottom, COLORS[0]);
            line(g, rows, r -> r[6], maxTime, maxLatency, top, bottom, COLORS[3]);
            legend(g, 0, "p50 run latency", COLORS[0]);
            legend(g, 1, "p99 run latency", COLORS[3]);
            marks(g, marks, maxTime, top, bottom);
            // Lower panel: runs scheduled and failed per 10 s.
            int top2 = 350;
            int bottom2 = 520;
            double maxRuns = Axes.niceCeil(Math.max(1, rows.stream().mapToDouble(r -> Math.max(r[1], r[2])).max()
                    .orElse(1)));
            Axes.frame(g, LEFT, RIGHT, top2, bottom2, maxRuns);
            g.drawString("per 10 s", 10, top2 - 8);
            line(g, rows, r -> r[1], maxTime, maxRuns, top2, bottom2, COLORS[2]);
            line(g, rows, r -> r[2], maxTime, maxRuns, top2, bottom2, COLORS[4]);
            line(g, rows, r -> r[4], maxTime, maxRuns, top2, bottom2, COLORS[3]);
            legend(g, 3, "runs scheduled", COLORS[2]);
            legend(g, 4, "runs started", COLORS[4]);
            legend(g, 5, "runs failed", COLORS[3]);
            timeAxis(g, maxTime, bottom2);
        }, file);
    }

    /** Curves: sorted seconds at which nodes got the generation, the group's size last. */
    static void propagation(Path file, Map<String, double[]> curves, String title) throws IOException {
        Canvas.writePng(WIDTH, 420, title, g -> {
            double maxTime = 1;
            for (double[] curve : curves.values()) {
                if (curve.length > 1) {
                    maxTime = Math.max(maxTime, curve[curve.length - 2]);
                }
            }
            maxTime = Axes.niceCeil(maxTime);
            int top = 60;
            int bottom = 360;
            Axes.frame(g, LEFT, RIGHT, top, bottom, 100);
            g.drawString("% of nodes", 10, top - 8);
            int i = 0;
            for (Map.Entry<String, double[]> entry : curves.entrySet()) {
                double[] curve = entry.getValue();
                double total = curve[curve.length - 1];
                Color color = COLORS[i % COLORS.length];
                g.setColor(color);
                g.setStroke(new BasicStroke(entry.getKey().startsWith("all") ? 3 : 1.5f));
                int px = LEFT;
                int py = bottom;
                for (int k = 0; k < curve.length - 1; k++) {
                    int x = LEFT + (int) ((RIGHT - LEFT) * curve[k] / maxTime);
                    int y = bottom - (int) ((bottom - top) * (k + 1) / total);
                    g.drawLine(px, py, x, py);
                    g.drawLine(x, py, x, y);
                    px = x;
                    py = y;
                }
                g.setStroke(new BasicStroke(1));
                legend(g, i++, entry.getKey(), color);
            }
            g.setColor(Color.BLACK);
            for (int k = 0; k <= 5; k++) {
                int x = LEFT + (RIGHT - LEFT) * k / 5;
                g.drawString(String.format(Locale.ROOT, "%.0f", maxTime * k / 5), x - 8, bottom + 18);
            }
            g.drawString("seconds after the generation started", LEFT + 250, bottom + 40);
        }, file);
    }

    static void processes(Path file, Map<String, List<ProcessMeter.Point>> processes, Map<String, Double> marks,
            String title) throws IOException {
        Canvas.writePng(WIDTH, 600, title, g -> {
            double maxTime = 1;
            double maxCores = 10;
            double maxRss = 1;
            for (List<ProcessMeter.Point> points : processes.values()) {
                for (ProcessMeter.Point p : points) {
                    maxTime = Math.max(maxTime, p.seconds());
                    maxCores = Math.max(maxCores, 100 * p.cores());
                    maxRss = Math.max(maxRss, p.rssMib());
                }
            }
            maxCores = Axes.niceCeil(maxCores);
            maxRss = Axes.niceCeil(maxRss);
            maxTime = Axes.niceCeil(maxTime);
            int top = 60;
            int bottom = 290;
            Axes.frame(g, LEFT, RIGHT, top, bottom, maxCores);
            g.drawString("% of one core", 10, top - 8);
            int top2 = 340;
            int bottom2 = 560;
            Axes.frame(g, LEFT, RIGHT, top2, bottom2, maxRss);
            g.drawString("RSS MiB", 10, top2 - 8);
            int i = 0;
            for (Map.Entry<String, List<ProcessMeter.Point>> entry : processes.entrySet()) {
                Color color = COLORS[i % COLORS.length];
                List<double[]> rows = entry.getValue().stream()
                        .map(p -> new double[] {p.seconds(), 100 * p.cores(), p.rssMib()}).toList();
                line(g, rows, r -> r[1], maxTime, maxCores, top, bottom, color);
                line(g, rows, r -> r[2], maxTime, maxRss, top2, bottom2, color);
                legend(g, i++, entry.getKey(), color);
            }
            marks(g, marks, maxTime, top, bottom);
            timeAxis(g, maxTime, bottom2);
        }, file);
    }

    private static void line(Graphics2D g, List<double[]> rows, ToDoubleFunction<double[]> value, double maxX,
            double maxY, int top, int bottom, Color color) {
        g.setColor(color);
        Stroke old = g.getStroke();
        g.setStroke(new BasicStroke(1.5f));
        int px = -1;
        int py = -1;
        for (double[] row : rows) {
            double v = value.applyAsDouble(row);
            if (Double.isNaN(v)) {
                px = -1;
                continue;
            }
            int x = LEFT + (int) ((RIGHT - LEFT) * row[0] / maxX);
            int y = bottom - (int) ((bottom - top) * Math.min(v, maxY) / maxY);
            if (px >= 0) {
                g.drawLine(px, py, x, y);
            }
            px = x;
            py = y;
        }
        g.setStroke(old);
        g.setColor(Color.BLACK);
    }

    private static void legend(Graphics2D g, int index, String label, Color color) {
        int y = 70 + index * 18;
        g.setColor(color);
        g.fillRect(RIGHT + 20, y - 9, 14, 10);
        g.setColor(Color.BLACK);
        g.drawString(label, RIGHT + 40, y);
    }

    private static void marks(Graphics2D g, Map<String, Double> marks, double maxTime, int top, int bottom) {
        int k = 0;
        for (Map.Entry<String, Double> mark : marks.entrySet()) {
            int x = LEFT + (int) ((RIGHT - LEFT) * mark.getValue() / maxTime);
            g.setColor(MARK);
            g.drawLine(x, top, x, bottom);
            g.setColor(Color.DARK_GRAY);
            g.drawString(mark.getKey(), x + 3, top + 12 + 14 * (k++ % 3));
        }
        g.setColor(Color.BLACK);
    }

    private static void timeAxis(Graphics2D g, double maxTime, int bottom) {
        g.setColor(Color.BLACK);
        for (int k = 0; k <= 5; k++) {
            int x = LEFT + (RIGHT - LEFT) * k / 5;
            g.drawString(String.format(Locale.ROOT, "%.0f", maxTime * k / 5), x - 8, bottom + 18);
        }
        g.drawString("seconds from the start of the schedule", LEFT + 250, bottom + 34);
    }
}
