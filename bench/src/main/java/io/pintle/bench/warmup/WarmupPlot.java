package io.pintle.bench.warmup;

import io.pintle.bench.plot.Axes;
import io.pintle.bench.plot.Canvas;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** One panel per workload: each variant's rate per second since the spawn (median over the rounds). */
final class WarmupPlot {
    private static final int WIDTH = 1000;
    private static final int PANEL = 300;
    private static final int LEFT = 80;
    private static final int RIGHT = WIDTH - 200;
    private static final Color[] COLORS = {new Color(90, 90, 90), new Color(40, 110, 200), new Color(220, 120, 30),
        new Color(40, 160, 70), new Color(170, 50, 160), new Color(200, 40, 40)};

    private WarmupPlot() {}

    static void write(List<Curve> curves, Instant date, Path file) throws IOException {
        Map<String, Map<String, List<Curve>>> byWorkload = WarmupReport.group(curves);
        int height = 60 + byWorkload.size() * (PANEL + 70);
        Canvas.writePng(WIDTH, height, "Warm-up: requests per second since the JVM's spawn (bench/warmup, " + date
                + ")", g -> {
                    int top = 70;
                    for (Map.Entry<String, Map<String, List<Curve>>> e : byWorkload.entrySet()) {
                        panel(g, e.getKey(), e.getValue(), top, top + PANEL);
                        top += PANEL + 70;
                    }
                }, file);
    }

    private static void panel(Graphics2D g, String workload, Map<String, List<Curve>> variants, int top,
            int bottom) {
        int seconds = variants.values().stream().flatMap(List::stream).mapToInt(c -> c.perSecond().length).max()
                .orElse(1);
        double max = 1;
        for (List<Curve> runs : variants.values()) {
            for (int s = 0; s < seconds; s++) {
                max = Math.max(max, WarmupReport.medianAt(runs, s));
            }
        }
        double yMax = Axes.niceCeil(max * 1.05);
        g.setColor(Color.BLACK);
        g.drawString(workload + ": requests per second (median over the rounds; dashed: 5 s)", LEFT, top - 10);
        Axes.frame(g, LEFT, RIGHT, top, bottom, yMax);
        for (int s = 0; s <= seconds; s += 5) {
            int x = x(s, seconds);
            String label = Integer.toString(s);
            g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, bottom + 16);
        }
        g.drawString("seconds since the spawn", (LEFT + RIGHT) / 2 - 60, bottom + 32);
        g.setColor(new Color(200, 60, 40));
        g.setStroke(new BasicStroke(1, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {5, 4}, 0));
        g.drawLine(x(5, seconds), top, x(5, seconds), bottom);
        int index = 0;
        for (Map.Entry<String, List<Curve>> e : variants.entrySet()) {
            Color color = COLORS[index % COLORS.length];
            g.setColor(color);
            g.setStroke(new BasicStroke(2));
            int px = x(0, seconds);
            int py = bottom;
            for (int s = 0; s < seconds; s++) {
                int x = x(s + 1, seconds);
                int y = bottom - (int) Math.round((bottom - top) * WarmupReport.medianAt(e.getValue(), s) / yMax);
                g.drawLine(px, py, x, y);
                px = x;
                py = y;
            }
            g.setStroke(new BasicStroke(1));
            g.fillRect(RIGHT + 15, top + 10 + 18 * index, 14, 4);
            g.setColor(Color.BLACK);
            g.drawString(e.getKey(), RIGHT + 35, top + 16 + 18 * index);
            index++;
        }
        g.setColor(Color.BLACK);
    }

    private static int x(double second, int seconds) {
        return LEFT + (int) Math.round((RIGHT - LEFT) * second / seconds);
    }
}
