package io.pintle.bench;

import io.pintle.bench.plot.Axes;
import io.pintle.bench.plot.Canvas;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The report's plot: every measured reload's trigger-to-effective in the order they ran, a dot coloured by its
 * trigger, with the server's own reload attempt ({@code ReloadOutcome.duration}) as a grey tick under it, and the
 * target as a dashed line. A reload never effective is a red cross at the top. Drawn with Java2D (headless), as the
 * other harnesses' plots.
 */
final class ReloadPlot {
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 470;
    private static final int LEFT = 80;
    private static final int RIGHT = WIDTH - 40;
    private static final int TOP = 90;
    private static final int BOTTOM = HEIGHT - 90;
    private static final Color API = new Color(40, 110, 200);
    private static final Color WATCH = new Color(220, 120, 30);
    private static final Color ATTEMPT = new Color(150, 150, 150);
    private static final Color TARGET = new Color(200, 60, 40);
    private static final Color MISSED = new Color(0xc0392b);
    private static final int DOT = 7;

    private ReloadPlot() {}

    /**
     * @param results the run's results
     * @param file the PNG to write
     * @throws IOException if it cannot be written
     */
    static void write(ReloadReport.Results results, Path file) throws IOException {
        ReloadUnderLoad.Figures underLoad = results.underLoad();
        List<ReloadUnderLoad.Reload> reloads = underLoad.reloads();
        String title = String.format(Locale.ROOT, "bench/reload, %s: trigger to effective, %,d nodes, %,d open "
                + "connections, %d req/s", results.environment().date(), underLoad.nodesAtStart(),
                underLoad.load().connections(), results.options().rate());
        Canvas.writePng(WIDTH, HEIGHT, title, g -> draw(g, results, reloads), file);
    }

    private static void draw(Graphics2D g, ReloadReport.Results results, List<ReloadUnderLoad.Reload> reloads) {
        double max = ReloadReport.TARGET_EFFECTIVE_MILLIS;
        for (ReloadUnderLoad.Reload reload : reloads) {
            max = Math.max(max, Math.max(reload.effectiveNanos(), reload.attemptNanos()) / 1e6);
        }
        double yMax = Axes.niceCeil(max * 1.05);
        g.drawString(legendLine(results, ReloadUnderLoad.Trigger.ADMIN_API), LEFT, 52);
        g.drawString(legendLine(results, ReloadUnderLoad.Trigger.FILE_WATCH), LEFT, 70);
        dot(g, API, LEFT - 14, 48);
        dot(g, WATCH, LEFT - 14, 66);
        g.setColor(Color.GRAY);
        g.drawLine(LEFT, BOTTOM, RIGHT, BOTTOM);
        g.drawLine(LEFT, TOP, LEFT, BOTTOM);
        Axes.grid(g, LEFT, RIGHT, TOP, BOTTOM, yMax, gridSteps(yMax));
        g.drawString("ms", LEFT - 30, TOP - 10);
        int count = reloads.size();
        int labelEvery = count <= 20 ? 1 : count <= 50 ? 5 : 10;
        for (int i = 1; i <= count; i++) {
            if (i % labelEvery == 0 || i == 1) {
                String label = Integer.toString(i);
                g.drawString(label, x(i, count) - g.getFontMetrics().stringWidth(label) / 2, BOTTOM + 16);
            }
        }
        g.drawString("measured reload, in the order run (they alternate: admin API, file watch)", LEFT, BOTTOM + 34);
        int target = y(ReloadReport.TARGET_EFFECTIVE_MILLIS, yMax);
        g.setColor(TARGET);
        g.setStroke(new BasicStroke(1, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {5, 4}, 0));
        g.drawLine(LEFT + 1, target, RIGHT, target);
        g.drawString(String.format(Locale.ROOT, "target %.0f ms", ReloadReport.TARGET_EFFECTIVE_MILLIS),
                RIGHT - 90, target - 4);
        g.setStroke(new BasicStroke(2));
        for (int i = 0; i < count; i++) {
            ReloadUnderLoad.Reload reload = reloads.get(i);
            int x = x(i + 1, count);
            if (reload.attemptNanos() >= 0) {
                int y = y(reload.attemptNanos() / 1e6, yMax);
                g.setColor(ATTEMPT);
                g.drawLine(x - 4, y, x + 4, y);
            }
            if (reload.effectiveNanos() < 0) {
                g.setColor(MISSED);
                g.drawLine(x - 4, TOP - 4, x + 4, TOP + 4);
                g.drawLine(x - 4, TOP + 4, x + 4, TOP - 4);
            } else {
                dot(g, reload.trigger() == ReloadUnderLoad.Trigger.ADMIN_API ? API : WATCH, x,
                        y(reload.effectiveNanos() / 1e6, yMax));
            }
        }
        g.setStroke(new BasicStroke(1));
        g.setColor(Color.DARK_GRAY);
        g.drawString("Dot: trigger (first rename) to the new node's first 200. Grey tick: the server's reload attempt "
                + "(ReloadOutcome.duration). Red cross: never effective.", 20, HEIGHT - 32);
        SteadyLoad.Figures load = results.underLoad().load();
        g.drawString(String.format(Locale.ROOT, "Steady load over the whole run: %,d requests, %,d failed; %,d of "
                        + "%,d connections closed. Server, load and probes in one JVM on %d cores.", load.sent(),
                load.failed(), Math.max(load.tlsClosed(), load.closedAtEnd()), load.connections(),
                results.environment().processors()), 20, HEIGHT - 14);
    }

    /** @return 5 intervals for an axis up to 2.5 or 5 times a power of ten (whole labels), 4 otherwise */
    private static int gridSteps(double yMax) {
        double leading = yMax / Math.pow(10, Math.floor(Math.log10(yMax)));
        return Math.abs(leading - 2.5) < 1e-9 || Math.abs(leading - 5) < 1e-9 ? 5 : 4;
    }

    private static String legendLine(ReloadReport.Results results, ReloadUnderLoad.Trigger trigger) {
        List<ReloadUnderLoad.Reload> reloads = results.underLoad().of(trigger);
        Summary effective = Summary.of(reloads.stream().mapToLong(ReloadUnderLoad.Reload::effectiveNanos)
                .filter(nanos -> nanos >= 0).toArray());
        String name = trigger == ReloadUnderLoad.Trigger.ADMIN_API ? "renames, then admin API" : "file watch only";
        return String.format(Locale.ROOT, "%s: %d reloads, median %s ms, p99 %s ms, max %s ms", name,
                reloads.size(), Summary.millis(effective.medianMillis()), Summary.millis(effective.p99Millis()),
                Summary.millis(effective.maxMillis()));
    }

    private static void dot(Graphics2D g, Color color, int x, int y) {
        g.setColor(color);
        g.fillOval(x - DOT / 2, y - DOT / 2, DOT, DOT);
        g.setColor(Color.BLACK);
    }

    private static int x(int reload, int count) {
        return LEFT + (int) Math.round((RIGHT - LEFT) * (reload - 0.5) / Math.max(1, count));
    }

    private static int y(double millis, double yMax) {
        return BOTTOM - (int) Math.round((BOTTOM - TOP) * Math.min(millis, yMax) / yMax);
    }
}
