package io.pintle.bench.channels;

import io.pintle.bench.plot.Axes;
import io.pintle.bench.plot.Canvas;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Two panels: update orders received per second after every node's policies changed, against the configured
 * rate; and the share of nodes that had the fanned-out order over time since the POST.
 */
final class ChannelsPlot {
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 720;
    private static final int LEFT = 80;
    private static final int RIGHT = WIDTH - 30;

    private ChannelsPlot() {}

    static void write(ChannelsResult r, Path file) throws IOException {
        String title = String.format(Locale.ROOT, "Order channels: %,d nodes parked on one server (bench/channels)",
                r.idlePolling);
        Canvas.writePng(WIDTH, HEIGHT, title, g -> {
            updates(g, r, 70, 330);
            fanOut(g, r, 420, 660);
        }, file);
    }

    private static void updates(Graphics2D g, ChannelsResult r, int top, int bottom) {
        int[] perSecond = r.updatesPerSecond();
        int max = r.options.rate();
        for (int count : perSecond) {
            max = Math.max(max, count);
        }
        double yMax = Axes.niceCeil(max * 1.15);
        int seconds = Math.max(1, perSecond.length);
        g.drawString(String.format(Locale.ROOT, "Update orders received per second after every node's "
                + "rules/rudder.tar.bz2 changed (policy_update_rate = %d, splay = %d s)", r.options.rate(),
                r.options.splaySeconds()), LEFT, top - 12);
        axes(g, top, bottom, yMax, "orders/s", seconds, "seconds since the rewrite of the archives began");
        double barWidth = (RIGHT - LEFT) / (double) seconds;
        g.setColor(new Color(70, 120, 180));
        for (int s = 0; s < perSecond.length; s++) {
            int h = (int) Math.round((bottom - top) * perSecond[s] / yMax);
            g.fillRect(LEFT + (int) (s * barWidth) + 1, bottom - h, Math.max(1, (int) barWidth - 1), h);
        }
        int rateY = bottom - (int) Math.round((bottom - top) * r.options.rate() / yMax);
        g.setColor(new Color(200, 60, 40));
        g.setStroke(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {6, 4}, 0));
        g.drawLine(LEFT, rateY, RIGHT, rateY);
        g.setStroke(new BasicStroke(1));
        g.drawString("configured rate", RIGHT - 100, rateY - 4);
        g.setColor(Color.BLACK);
    }

    private static void fanOut(Graphics2D g, ChannelsResult r, int top, int bottom) {
        long[] orders = ChannelsResult.received(r.runOrders);
        long[] reports = ChannelsResult.received(r.runReports);
        long last = Math.max(r.doneNanos, Math.max(ChannelsResult.quantile(reports, 1),
                ChannelsResult.quantile(orders, 1)));
        double xMax = Axes.niceCeil(Math.max(1, last / 1e6));
        g.drawString(String.format(Locale.ROOT, "One order to every node: nodes that had it (blue) and whose "
                + "report was taken (green), ms since the POST; done event (red)"), LEFT, top - 12);
        axes(g, top, bottom, r.options.nodes(), "nodes", xMax, "ms since POST /remote-run/all");
        curve(g, orders, xMax, r.options.nodes(), top, bottom, new Color(70, 120, 180));
        curve(g, reports, xMax, r.options.nodes(), top, bottom, new Color(60, 150, 60));
        if (r.doneNanos > 0) {
            int x = LEFT + (int) Math.round((RIGHT - LEFT) * (r.doneNanos / 1e6) / xMax);
            g.setColor(new Color(200, 60, 40));
            g.drawLine(x, top, x, bottom);
            g.setColor(Color.BLACK);
        }
    }

    private static void curve(Graphics2D g, long[] sorted, double xMax, int nodes, int top, int bottom, Color c) {
        g.setColor(c);
        g.setStroke(new BasicStroke(2));
        int px = LEFT;
        int py = bottom;
        int step = Math.max(1, sorted.length / 500);
        for (int i = 0; i < sorted.length; i += step) {
            int x = LEFT + (int) Math.round((RIGHT - LEFT) * (sorted[i] / 1e6) / xMax);
            int y = bottom - (int) Math.round((bottom - top) * (i + 1) / (double) nodes);
            g.drawLine(px, py, x, y);
            px = x;
            py = y;
        }
        if (sorted.length > 0) {
            int x = LEFT + (int) Math.round((RIGHT - LEFT) * (sorted[sorted.length - 1] / 1e6) / xMax);
            int y = bottom - (int) Math.round((bottom - top) * sorted.length / (double) nodes);
            g.drawLine(px, py, x, y);
        }
        g.setStroke(new BasicStroke(1));
        g.setColor(Color.BLACK);
    }

    private static void axes(Graphics2D g, int top, int bottom, double yMax, String yLabel, double xMax,
            String xLabel) {
        Axes.frame(g, LEFT, RIGHT, top, bottom, yMax);
        for (int i = 0; i <= 10; i++) {
            int x = LEFT + (RIGHT - LEFT) * i / 10;
            String label = String.format(Locale.ROOT, "%,.0f", xMax * i / 10);
            g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, bottom + 16);
        }
        g.drawString(xLabel, (LEFT + RIGHT) / 2 - g.getFontMetrics().stringWidth(xLabel) / 2, bottom + 32);
        g.drawString(yLabel, 8, top + 4);
    }
}
