package io.pintle.bench.fleet;

import io.pintle.bench.plot.Axes;
import io.pintle.bench.plot.Canvas;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * {@code bench/relaysync}'s plot: per generation, the share of the relays' nodes served with it over the seconds
 * since it was written; A's in blues, B's in oranges (dashed), a shade per round.
 */
final class RelaySyncPlot {
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 460;
    private static final int LEFT = 80;
    private static final int RIGHT = WIDTH - 160;
    private static final int TOP = 60;
    private static final int BOTTOM = HEIGHT - 80;
    private static final Color[] A_COLORS = {new Color(0x1f77b4), new Color(0x08519c), new Color(0x6baed6),
            new Color(0x3182bd)};
    private static final Color[] B_COLORS = {new Color(0xff7f0e), new Color(0xa63603), new Color(0xfdae6b),
            new Color(0xe6550d)};
    private static final float[] DASH = {8, 4};

    /**
     * One generation's propagation.
     *
     * @param variant "A" or "B"
     * @param round its round (1-based)
     * @param seconds sorted: when each node was seen with it, seconds after written
     * @param total the relays' nodes (the curve's 100 %)
     */
    record Curve(String variant, int round, double[] seconds, int total) {}

    private RelaySyncPlot() {}

    /**
     * @param curves by legend label ("A, round 1")
     * @param title the plot's title
     * @param caption the line under the time axis that names the variants
     */
    static void write(Path file, Map<String, Curve> curves, String title, String caption) throws IOException {
        Canvas.writePng(WIDTH, HEIGHT, title, g -> draw(g, curves, caption), file);
    }

    private static void draw(Graphics2D g, Map<String, Curve> curves, String caption) {
        double maxTime = 1;
        for (Curve curve : curves.values()) {
            if (curve.seconds().length > 0) {
                maxTime = Math.max(maxTime, curve.seconds()[curve.seconds().length - 1]);
            }
        }
        maxTime = Axes.niceCeil(maxTime);
        Axes.frame(g, LEFT, RIGHT, TOP, BOTTOM, 100);
        g.drawString("% of relay nodes", 10, TOP - 10);
        int index = 0;
        for (Map.Entry<String, Curve> entry : curves.entrySet()) {
            Curve curve = entry.getValue();
            boolean a = curve.variant().equals("A");
            Color[] colors = a ? A_COLORS : B_COLORS;
            Color color = colors[(curve.round() - 1) % colors.length];
            BasicStroke stroke = a ? new BasicStroke(2f)
                    : new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, DASH, 0);
            g.setColor(color);
            g.setStroke(stroke);
            int px = LEFT;
            int py = BOTTOM;
            double[] seconds = curve.seconds();
            for (int k = 0; k < seconds.length; k++) {
                int x = LEFT + (int) ((RIGHT - LEFT) * seconds[k] / maxTime);
                int y = BOTTOM - (int) ((BOTTOM - TOP) * (k + 1) / (double) curve.total());
                g.drawLine(px, py, x, py);
                g.drawLine(x, py, x, y);
                px = x;
                py = y;
            }
            int y = TOP + 10 + index * 20;
            g.drawLine(RIGHT + 20, y - 4, RIGHT + 50, y - 4);
            g.setStroke(new BasicStroke(1));
            g.setColor(Color.BLACK);
            g.drawString(entry.getKey(), RIGHT + 58, y);
            index++;
        }
        for (int k = 0; k <= 5; k++) {
            int x = LEFT + (RIGHT - LEFT) * k / 5;
            g.drawString(String.format(Locale.ROOT, maxTime < 10 ? "%.1f" : "%.0f", maxTime * k / 5), x - 8,
                    BOTTOM + 18);
        }
        g.drawString("seconds after the generation was written on the root", LEFT + 200, BOTTOM + 40);
        g.drawString(caption, LEFT, BOTTOM + 62);
    }
}
