package io.pintle.bench.plot;

import java.awt.Color;
import java.awt.Graphics2D;
import java.util.Locale;

/** The value axis the harnesses' line and bar plots share: a round maximum, grid lines and their labels. */
public final class Axes {
    private static final Color GRID = new Color(230, 230, 230);

    private Axes() {}

    /**
     * @param value a plot's largest value (positive)
     * @return the smallest of 1, 2, 2.5, 5 and 10 times a power of ten at or above it: the axis's maximum
     */
    public static double niceCeil(double value) {
        double magnitude = Math.pow(10, Math.floor(Math.log10(value)));
        for (double step : new double[] {1, 2, 2.5, 5, 10}) {
            if (step * magnitude >= value) {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }

    /**
     * Horizontal grid lines from {@code bottom} (0) to {@code top} ({@code max}), {@code steps} intervals, each
     * labelled with its value left of {@code left}; leaves the colour black.
     */
    public static void grid(Graphics2D g, int left, int right, int top, int bottom, double max, int steps) {
        for (int i = 0; i <= steps; i++) {
            int y = bottom - (bottom - top) * i / steps;
            g.setColor(GRID);
            g.drawLine(left + 1, y, right, y);
            g.setColor(Color.BLACK);
            String label = String.format(Locale.ROOT, "%,.0f", max * i / steps);
            g.drawString(label, left - 8 - g.getFontMetrics().stringWidth(label), y + 4);
        }
    }

    /** The two axis lines (grey), the value axis gridded in 4 intervals up to {@code max}. */
    public static void frame(Graphics2D g, int left, int right, int top, int bottom, double max) {
        g.setColor(Color.GRAY);
        g.drawLine(left, bottom, right, bottom);
        g.drawLine(left, top, left, bottom);
        grid(g, left, right, top, bottom, max, 4);
    }
}
