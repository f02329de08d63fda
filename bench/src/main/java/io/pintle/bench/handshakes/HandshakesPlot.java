package io.pintle.bench.handshakes;

import io.pintle.bench.plot.Axes;
import io.pintle.bench.plot.Canvas;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Handshakes per second per row, as vertical bars grouped by server key (median; a black whisker from the slowest
 * to the fastest window), one colour per trust mode, with the ratio to the pinned row under each CA bar.
 */
final class HandshakesPlot {
    private static final int HEIGHT = 520;
    private static final int TOP = 70;
    private static final int BOTTOM = 420;
    private static final int LEFT = 80;
    private static final int BAR = 70;
    private static final int GAP = 60;
    private static final Color[] COLOURS = {new Color(70, 120, 180), new Color(220, 130, 40), new Color(90, 160, 90)};

    private HandshakesPlot() {}

    static void write(HandshakesResult r, Path file) throws IOException {
        List<Row> rows = Row.of(r);
        int modes = r.options.modes().size();
        int groups = r.options.serverKeys().size();
        int width = Math.max(1000, LEFT + groups * (modes * BAR + GAP) + 40);
        double max = rows.stream().mapToDouble(Row::max).max().orElse(1) * 1.15;
        String title = String.format(Locale.ROOT, "Full TLS 1.3 handshakes per second, 1 GET each (bench/handshakes,"
                + " %s clients, %d× s_time)", HandshakesLayout.title(r.options.clientKey()), r.options.parallel());
        Canvas.writePng(width, HEIGHT, title, g -> {
            g.setColor(Color.GRAY);
            g.drawLine(LEFT, BOTTOM, width - 20, BOTTOM);
            Axes.grid(g, LEFT, width - 20, TOP, BOTTOM, max, 5);
            g.drawString("handshakes/s", 8, TOP - 14);
            for (int k = 0; k < groups; k++) {
                var key = r.options.serverKeys().get(k);
                int x0 = LEFT + GAP / 2 + k * (modes * BAR + GAP);
                double pinned = rows.stream().filter(row -> row.serverKey() == key && row.mode() == Mode.PINNED)
                        .mapToDouble(Row::median).findFirst().orElse(Double.NaN);
                for (int m = 0; m < modes; m++) {
                    Mode mode = r.options.modes().get(m);
                    Row row = rows.stream().filter(x -> x.serverKey() == key && x.mode() == mode).findFirst()
                            .orElse(null);
                    if (row == null) {
                        continue;
                    }
                    int x = x0 + m * BAR;
                    int h = (int) Math.round((BOTTOM - TOP) * row.median() / max);
                    g.setColor(COLOURS[mode.ordinal() % COLOURS.length]);
                    g.fillRect(x + 6, BOTTOM - h, BAR - 12, h);
                    g.setColor(Color.BLACK);
                    int yMin = BOTTOM - (int) Math.round((BOTTOM - TOP) * row.min() / max);
                    int yMax = BOTTOM - (int) Math.round((BOTTOM - TOP) * row.max() / max);
                    g.drawLine(x + BAR / 2, yMin, x + BAR / 2, yMax);
                    g.drawLine(x + BAR / 2 - 5, yMin, x + BAR / 2 + 5, yMin);
                    g.drawLine(x + BAR / 2 - 5, yMax, x + BAR / 2 + 5, yMax);
                    String value = String.format(Locale.ROOT, "%,.0f", row.median());
                    g.drawString(value, x + BAR / 2 - g.getFontMetrics().stringWidth(value) / 2, yMax - 6);
                    g.drawString(mode.label(), x + BAR / 2 - g.getFontMetrics().stringWidth(mode.label()) / 2,
                            BOTTOM + 16);
                    if (mode != Mode.PINNED && !Double.isNaN(pinned)) {
                        String ratio = String.format(Locale.ROOT, "%.2f×", row.median() / pinned);
                        g.drawString(ratio, x + BAR / 2 - g.getFontMetrics().stringWidth(ratio) / 2, BOTTOM + 32);
                    }
                }
                String name = HandshakesLayout.title(key) + " server key";
                g.drawString(name, x0 + modes * BAR / 2 - g.getFontMetrics().stringWidth(name) / 2, BOTTOM + 52);
            }
            g.setColor(Color.DARK_GRAY);
            g.drawString("Bars: median of the rounds; whiskers: slowest and fastest window; under a CA bar: its ratio"
                    + " to pinned. Server on CPU " + r.options.serverCpus() + ", generator on CPU "
                    + r.options.clientCpus() + ".", 20, HEIGHT - 30);
            g.drawString(String.format(Locale.ROOT, "%d rounds × %d s per row, interleaved; %s.", r.options.rounds(),
                    r.options.windowSeconds(), r.started), 20, HEIGHT - 12);
        }, file);
    }
}
