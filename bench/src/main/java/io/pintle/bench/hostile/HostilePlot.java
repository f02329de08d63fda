package io.pintle.bench.hostile;

import io.pintle.bench.plot.Canvas;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The report's plot, over the whole run: the victim's download times (log scale, failures in red at the top,
 * issue 18's 2 s line), then the work gauges, then threads and descriptors, with each attack's window shaded.
 * Drawn with Java2D (headless), as the other harnesses' plots.
 */
final class HostilePlot {
    private static final int WIDTH = 1400;
    private static final int LEFT = 90;
    private static final int RIGHT = 30;
    private static final int TOP = 50;
    private static final int PANEL = 220;
    private static final int GAP = 45;
    private static final double MIN_MS = 1;
    private static final double MAX_MS = 60_000;
    private static final Color[] SHADES = {
        new Color(0xfde2e2), new Color(0xe2ecfd), new Color(0xe4f7e2), new Color(0xfdf3d9), new Color(0xefe2fd)
    };
    private static final Map<Gauge, Color> WORK_COLORS = Map.of(
            Gauge.INFLIGHT_FILES, new Color(0x1f77b4), Gauge.QUEUED_FILES, new Color(0x17becf),
            Gauge.INFLIGHT_UPLOADS, new Color(0xd62728), Gauge.QUEUED_UPLOADS, new Color(0xff9896),
            Gauge.INFLIGHT_API, new Color(0x7f7f7f), Gauge.CHANGE_WAITERS, new Color(0x2ca02c));
    private static final Map<Gauge, Color> PROCESS_COLORS = Map.of(
            Gauge.THREADS, new Color(0x9467bd), Gauge.DESCRIPTORS, new Color(0x8c564b));

    private HostilePlot() {}

    static void write(HostileReport.Context context, List<AttackRun> runs, List<GaugeSampler.Sample> samples,
            List<Victim.Download> downloads, Path file) throws IOException {
        int height = TOP + 3 * PANEL + 2 * GAP + 60;
        String title = "bench/hostile, " + context.date() + ": a node's downloads and the server's gauges under"
                + " each attack of issue 18";
        Canvas.writePng(WIDTH, height, title, g -> {
            long origin = samples.isEmpty() ? 0 : samples.get(0).nanos();
            long last = samples.isEmpty() ? 1 : samples.get(samples.size() - 1).nanos();
            Axis x = new Axis(origin, Math.max(last, origin + 1));
            int[] tops = {TOP, TOP + PANEL + GAP, TOP + 2 * (PANEL + GAP)};
            for (int top : tops) {
                shade(g, runs, x, top);
            }
            victimPanel(g, downloads, x, tops[0]);
            gaugePanel(g, samples, x, tops[1], WORK_COLORS, "work in progress (requests, waits)");
            gaugePanel(g, samples, x, tops[2], PROCESS_COLORS, "server process");
            g.setColor(Color.DARK_GRAY);
            int bottom = tops[2] + PANEL;
            for (int s = 0; s <= x.seconds(); s += x.seconds() > 400 ? 60 : 30) {
                int px = x.at(origin + s * 1_000_000_000L);
                g.drawLine(px, bottom, px, bottom + 4);
                g.drawString(s + " s", px - 10, bottom + 18);
            }
            g.drawString("Shaded: each attack's window, from its first action until the gauges were back (or the"
                    + " watch ended). Time in seconds since the gauges' first reading.", 20, height - 12);
        }, file);
    }

    /** Maps nanoTime to pixels. */
    private record Axis(long from, long to) {
        int at(long nanos) {
            return LEFT + (int) Math.round((double) (nanos - from) / (to - from) * (WIDTH - LEFT - RIGHT));
        }

        long seconds() {
            return (to - from) / 1_000_000_000L;
        }
    }

    private static void shade(Graphics2D g, List<AttackRun> runs, Axis x, int top) {
        for (int i = 0; i < runs.size(); i++) {
            AttackRun run = runs.get(i);
            int from = x.at(run.startNanos());
            int to = x.at(run.observedUntilNanos());
            g.setColor(SHADES[i % SHADES.length]);
            g.fillRect(from, top, Math.max(1, to - from), PANEL);
            g.setColor(Color.DARK_GRAY);
            g.drawString(run.kind().label(), from + 3, top + 12);
        }
    }

    private static void victimPanel(Graphics2D g, List<Victim.Download> downloads, Axis x, int top) {
        frame(g, top, "victim download time, ms (log)");
        for (double ms = MIN_MS; ms <= MAX_MS; ms *= 10) {
            int y = logY(ms, top);
            g.setColor(new Color(0xdddddd));
            g.drawLine(LEFT, y, WIDTH - RIGHT, y);
            g.setColor(Color.DARK_GRAY);
            g.drawString(String.format(Locale.ROOT, "%,.0f", ms), LEFT - 50, y + 4);
        }
        int limit = logY(Victim.SLOW_NANOS / 1e6, top);
        g.setColor(new Color(0xe67e22));
        g.setStroke(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {5, 4}, 0));
        g.drawLine(LEFT, limit, WIDTH - RIGHT, limit);
        g.drawString("2 s", WIDTH - RIGHT - 25, limit - 4);
        g.setStroke(new BasicStroke(1));
        for (Victim.Download d : downloads) {
            int px = x.at(d.startNanos());
            if (d.failure() == null) {
                g.setColor(new Color(0x1f77b4));
                int y = logY(d.nanos() / 1e6, top);
                g.fillRect(px - 1, y - 1, 2, 2);
            } else {
                g.setColor(new Color(0xc0392b));
                int y = top + 8;
                g.drawLine(px - 3, y - 3, px + 3, y + 3);
                g.drawLine(px - 3, y + 3, px + 3, y - 3);
            }
        }
    }

    private static void gaugePanel(Graphics2D g, List<GaugeSampler.Sample> samples, Axis x, int top,
            Map<Gauge, Color> gauges, String title) {
        frame(g, top, title);
        double max = 1;
        for (GaugeSampler.Sample s : samples) {
            for (Gauge gauge : gauges.keySet()) {
                if (!Double.isNaN(s.get(gauge))) {
                    max = Math.max(max, s.get(gauge));
                }
            }
        }
        double scale = niceCeiling(max);
        for (int i = 0; i <= 4; i++) {
            double value = scale * i / 4;
            int y = top + PANEL - (int) Math.round(value / scale * PANEL);
            g.setColor(new Color(0xdddddd));
            g.drawLine(LEFT, y, WIDTH - RIGHT, y);
            g.setColor(Color.DARK_GRAY);
            g.drawString(String.format(Locale.ROOT, "%,.0f", value), LEFT - 50, y + 4);
        }
        int legend = LEFT + 300;
        for (Gauge gauge : Gauge.values()) {
            Color color = gauges.get(gauge);
            if (color == null) {
                continue;
            }
            g.setColor(color);
            g.setStroke(new BasicStroke(1.6f));
            int px = -1;
            int py = -1;
            for (GaugeSampler.Sample s : samples) {
                double v = s.get(gauge);
                if (Double.isNaN(v)) {
                    px = -1;
                    continue;
                }
                int nx = x.at(s.nanos());
                int ny = top + PANEL - (int) Math.round(v / scale * PANEL);
                if (px >= 0) {
                    g.drawLine(px, py, nx, ny);
                }
                px = nx;
                py = ny;
            }
            g.setStroke(new BasicStroke(1));
            g.fillRect(legend, top - 12, 14, 4);
            g.drawString(gauge.label(), legend + 18, top - 6);
            legend += g.getFontMetrics().stringWidth(gauge.label()) + 40;
        }
    }

    private static void frame(Graphics2D g, int top, String title) {
        g.setColor(Color.BLACK);
        g.drawRect(LEFT, top, WIDTH - LEFT - RIGHT, PANEL);
        g.drawString(title, LEFT, top - 6);
    }

    private static int logY(double ms, int top) {
        double clamped = Math.max(MIN_MS, Math.min(MAX_MS, ms));
        double share = (Math.log10(clamped) - Math.log10(MIN_MS)) / (Math.log10(MAX_MS) - Math.log10(MIN_MS));
        return top + PANEL - (int) Math.round(share * PANEL);
    }

    private static double niceCeiling(double max) {
        double step = Math.pow(10, Math.floor(Math.log10(max)));
        for (double m : new double[] {1, 2, 4, 5, 8, 10}) {
            if (m * step >= max) {
                return m * step;
            }
        }
        return 10 * step;
    }
}
