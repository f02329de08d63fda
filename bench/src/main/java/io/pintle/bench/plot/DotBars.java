package io.pintle.bench.plot;

import java.awt.Color;
import java.awt.Graphics2D;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * Horizontal bars of medians, one row each, with every value behind a median drawn as a dot on its bar: what
 * {@code bench/accessline} and {@code bench/treescan} plot.
 */
public final class DotBars {
    private DotBars() {}

    /**
     * One row.
     *
     * @param label drawn at the left
     * @param median the bar's length
     * @param values the dots
     * @param color the bar's
     * @param text drawn right of the plot (the median, with its unit)
     */
    public record Row(String label, double median, List<Double> values, Color color, String text) {
        public Row {
            Objects.requireNonNull(label);
            values = List.copyOf(values);
        }
    }

    /**
     * Writes the plot as a PNG, 900 pixels wide, 44 a row, the bars' scale from zero to the largest dot or median.
     *
     * @param title the first line
     * @param rows top to bottom
     * @param left where bars start (the labels' room)
     * @param footer the last line
     * @param file the PNG
     * @throws IOException if it cannot be written
     */
    public static void write(String title, List<Row> rows, int left, String footer, Path file) throws IOException {
        int width = 900;
        int rowHeight = 44;
        int top = 60;
        int height = top + rows.size() * rowHeight + 50;
        double max = rows.stream().flatMap(r -> java.util.stream.Stream.concat(r.values().stream(),
                java.util.stream.Stream.of(r.median()))).mapToDouble(Double::doubleValue).max().orElse(1);
        Canvas.writePng(width, height, title, g -> {
            draw(g, rows, max, left, width - left - 130, top, rowHeight);
            g.setColor(Color.DARK_GRAY);
            g.drawString(footer, 20, height - 16);
        }, file);
    }

    /**
     * @param g where to draw
     * @param rows top to bottom
     * @param max the value at the plot's right edge
     * @param left where bars start
     * @param plotWidth the bars' full length
     * @param top the first row's top
     * @param rowHeight each row's height
     */
    public static void draw(Graphics2D g, List<Row> rows, double max, int left, int plotWidth, int top,
            int rowHeight) {
        for (int i = 0; i < rows.size(); i++) {
            Row row = rows.get(i);
            int y = top + i * rowHeight;
            g.setColor(Color.BLACK);
            g.drawString(row.label(), 20, y + rowHeight / 2 + 4);
            g.setColor(row.color());
            g.fillRect(left, y + 8, Math.max((int) Math.round(row.median() / max * plotWidth), 1), rowHeight - 16);
            g.setColor(Color.BLACK);
            for (double value : row.values()) {
                int x = left + (int) Math.round(value / max * plotWidth);
                g.fillOval(x - 2, y + rowHeight / 2 - 2, 5, 5);
            }
            g.drawString(row.text(), left + plotWidth + 16, y + rowHeight / 2 + 4);
        }
    }
}
