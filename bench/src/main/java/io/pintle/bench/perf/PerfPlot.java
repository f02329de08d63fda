package io.pintle.bench.perf;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * The report's plot: Pintle's figure over nginx's for every throughput row, as horizontal bars, with the issue's
 * 0.8 target and parity marked. Drawn with Java2D (headless), so no plotting tool is needed.
 */
final class PerfPlot {
    private static final int WIDTH = 1100;
    private static final int ROW_HEIGHT = 40;
    private static final int LEFT = 560;
    private static final int TOP = 60;
    private static final double MAX_RATIO = 1.6;

    private PerfPlot() {}

    static void write(List<PerfRow> rows, Instant date, Path file) throws IOException {
        List<PerfRow> ratios = rows.stream().filter(r -> !Double.isNaN(r.targetRatio())).toList();
        int height = TOP + ratios.size() * ROW_HEIGHT + 75;
        BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, height);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString("Pintle / nginx, same job, same machine (bench/perf, " + date + ")", 20, 28);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            int plotWidth = WIDTH - LEFT - 40;
            int bottom = TOP + ratios.size() * ROW_HEIGHT;
            for (int i = 0; i < ratios.size(); i++) {
                PerfRow row = ratios.get(i);
                int y = TOP + i * ROW_HEIGHT;
                String label = shorten(row.label());
                g.setColor(Color.BLACK);
                g.drawString(label, 20, y + ROW_HEIGHT / 2 + 4);
                double ratio = Double.isNaN(row.ratio()) ? 0 : row.ratio();
                int bar = (int) Math.round(Math.min(ratio, MAX_RATIO) / MAX_RATIO * plotWidth);
                g.setColor(ratio >= row.targetRatio() ? new Color(0x4c9a2a) : new Color(0xc0392b));
                g.fillRect(LEFT, y + 4, bar, ROW_HEIGHT / 2 - 4);
                g.setColor(Color.BLACK);
                g.drawString(String.format(Locale.ROOT, "%.2f×", ratio), LEFT + bar + 4, y + ROW_HEIGHT / 2 - 2);
                // Thin bar: nginx's server CPU per unit over Pintle's (1 = as cheap as nginx).
                double efficiency = Double.isNaN(row.cpuRatio()) || row.cpuRatio() == 0 ? 0 : 1 / row.cpuRatio();
                int thin = (int) Math.round(Math.min(efficiency, MAX_RATIO) / MAX_RATIO * plotWidth);
                g.setColor(new Color(0x7f8c8d));
                g.fillRect(LEFT, y + ROW_HEIGHT / 2 + 1, thin, ROW_HEIGHT / 4);
                g.drawString(String.format(Locale.ROOT, "%.2f×", efficiency), LEFT + thin + 4, y + ROW_HEIGHT - 4);
            }
            for (double mark : new double[] {0.8, 1.0}) {
                int x = LEFT + (int) Math.round(mark / MAX_RATIO * plotWidth);
                g.setColor(mark == 1.0 ? Color.DARK_GRAY : new Color(0xe67e22));
                g.setStroke(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10,
                        new float[] {5, 4}, 0));
                g.drawLine(x, TOP - 5, x, bottom + 5);
                String text = mark == 1.0 ? "= nginx" : "target 0.8×";
                int width = g.getFontMetrics().stringWidth(text);
                g.drawString(text, mark == 1.0 ? x + 4 : x - width - 4, bottom + 22);
            }
            g.setColor(Color.DARK_GRAY);
            g.drawString("Thick bars: Pintle's rate over nginx's (green: at or above the target; red: below)."
                    + " Thin grey bars: nginx's server CPU per unit over Pintle's.", 20, height - 26);
            g.drawString("Throughput rows only; memory and the herd are in the table.", 20, height - 10);
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", file.toFile());
    }

    private static String shorten(String label) {
        String text = label.replace(", RSA-4096 client certificate", "").replace(" at once, 1 request each", " at once")
                .replace("New TLS connections, full handshake", "Full handshake");
        return text.length() > 80 ? text.substring(0, 77) + "…" : text;
    }
}
