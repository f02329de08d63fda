package io.pintle.bench.plot;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Pintle's figure over another server's, one row per measured job, as horizontal bars: a thick bar for the rate
 * ratio (green at or above the row's target, red below) and a thin grey bar for the other server's CPU per unit of
 * work over Pintle's (1 = as cheap), with dashed lines at the marks (parity, a target). Extracted from
 * {@code bench/perf}'s plot so that {@code bench/uploads} draws the same picture.
 */
public final class RatioBars {
    private static final int WIDTH = 1100;
    private static final int ROW_HEIGHT = 40;
    private static final int LEFT = 560;
    private static final int TOP = 60;
    private static final int LABEL_CHARS = 80;
    private static final Color GOOD = new Color(0x4c9a2a);
    private static final Color BAD = new Color(0xc0392b);
    private static final Color CPU = new Color(0x7f8c8d);
    private static final Color TARGET = new Color(0xe67e22);

    private RatioBars() {}

    /**
     * One row.
     *
     * @param label what the row measures (shortened to 80 characters)
     * @param ratio Pintle's rate over the other server's, or NaN (no bar, a dash)
     * @param cpuEfficiency the other server's CPU per unit over Pintle's, or NaN (no bar, a dash)
     * @param targetRatio the least ratio drawn green
     */
    public record Bar(String label, double ratio, double cpuEfficiency, double targetRatio) {
        public Bar {
            Objects.requireNonNull(label);
        }
    }

    /**
     * A dashed vertical line.
     *
     * @param ratio where
     * @param text its caption, under the axis
     * @param parity whether it is the "= other server" line (dark grey, caption to its right) rather than a target
     *     (orange, caption to its left)
     */
    public record Mark(double ratio, String text, boolean parity) {}

    /**
     * Writes the plot as a PNG.
     *
     * @param title the first line
     * @param bars the rows, top to bottom
     * @param marks the dashed lines
     * @param maxRatio the ratio at the right edge (longer bars are cut there)
     * @param footer one or two lines of legend at the bottom
     * @param file the PNG to write
     * @throws IOException if it cannot be written
     */
    public static void write(String title, List<Bar> bars, List<Mark> marks, double maxRatio, List<String> footer,
            Path file) throws IOException {
        int height = TOP + bars.size() * ROW_HEIGHT + 45 + 16 * footer.size();
        Canvas.writePng(WIDTH, height, title, g -> {
            int plotWidth = WIDTH - LEFT - 40;
            int bottom = TOP + bars.size() * ROW_HEIGHT;
            for (int i = 0; i < bars.size(); i++) {
                Bar row = bars.get(i);
                int y = TOP + i * ROW_HEIGHT;
                g.setColor(Color.BLACK);
                g.drawString(shorten(row.label()), 20, y + ROW_HEIGHT / 2 + 4);
                double ratio = Double.isNaN(row.ratio()) ? 0 : row.ratio();
                int bar = (int) Math.round(Math.min(ratio, maxRatio) / maxRatio * plotWidth);
                g.setColor(ratio >= row.targetRatio() ? GOOD : BAD);
                g.fillRect(LEFT, y + 4, bar, ROW_HEIGHT / 2 - 4);
                g.setColor(Color.BLACK);
                g.drawString(times(row.ratio()), LEFT + bar + 4, y + ROW_HEIGHT / 2 - 2);
                double efficiency = Double.isNaN(row.cpuEfficiency()) ? 0 : row.cpuEfficiency();
                int thin = (int) Math.round(Math.min(efficiency, maxRatio) / maxRatio * plotWidth);
                g.setColor(CPU);
                g.fillRect(LEFT, y + ROW_HEIGHT / 2 + 1, thin, ROW_HEIGHT / 4);
                g.drawString(times(row.cpuEfficiency()), LEFT + thin + 4, y + ROW_HEIGHT - 4);
            }
            for (Mark mark : marks) {
                int x = LEFT + (int) Math.round(mark.ratio() / maxRatio * plotWidth);
                g.setColor(mark.parity() ? Color.DARK_GRAY : TARGET);
                g.setStroke(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10,
                        new float[] {5, 4}, 0));
                g.drawLine(x, TOP - 5, x, bottom + 5);
                int width = g.getFontMetrics().stringWidth(mark.text());
                g.drawString(mark.text(), mark.parity() ? x + 4 : x - width - 4, bottom + 22);
            }
            g.setColor(Color.DARK_GRAY);
            for (int i = 0; i < footer.size(); i++) {
                g.drawString(footer.get(i), 20, height - 10 - 16 * (footer.size() - 1 - i));
            }
        }, file);
    }

    /** @return e.g. {@code 0.85×}, or a dash when there is no figure */
    private static String times(double ratio) {
        return Double.isNaN(ratio) ? "—" : String.format(Locale.ROOT, "%.2f×", ratio);
    }

    private static String shorten(String label) {
        return label.length() > LABEL_CHARS ? label.substring(0, LABEL_CHARS - 3) + "…" : label;
    }
}
