package io.pintle.bench.stall;

import io.pintle.bench.plot.Canvas;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * The report's plot: each family's rate as a horizontal bar, green when the family was clean (no stuck request,
 * no error, no {@code NullPointerException} logged, every request counted by the server), red otherwise, with the
 * stuck and NPE counts beside it. Drawn with Java2D (headless), as {@code bench/perf}'s plot.
 */
final class StallPlot {
    private static final int WIDTH = 1000;
    private static final int ROW_HEIGHT = 34;
    private static final int LEFT = 190;
    private static final int TOP = 60;

    private StallPlot() {}

    static void write(List<StallReport.FamilyRun> runs, StallOptions options, Instant date, Path file)
            throws IOException {
        int height = TOP + runs.size() * ROW_HEIGHT + 70;
        String title = String.format(Locale.ROOT, "bench/stall, %s: %,d requests per family, %d streams on one"
                + " HTTP/2 connection", date, options.requests(), options.streams());
        Canvas.writePng(WIDTH, height, title, g -> {
            double max = runs.stream().mapToDouble(r -> r.outcome().perSecond()).max().orElse(1);
            int plotWidth = WIDTH - LEFT - 260;
            for (int i = 0; i < runs.size(); i++) {
                StallReport.FamilyRun run = runs.get(i);
                int y = TOP + i * ROW_HEIGHT;
                g.setColor(Color.BLACK);
                g.drawString(run.family().label(), 20, y + ROW_HEIGHT / 2 + 4);
                double rate = run.outcome().perSecond();
                int bar = max > 0 ? (int) Math.round(rate / max * plotWidth) : 0;
                g.setColor(run.clean() ? new Color(0x4c9a2a) : new Color(0xc0392b));
                g.fillRect(LEFT, y + 6, Math.max(bar, 1), ROW_HEIGHT - 12);
                g.setColor(Color.BLACK);
                g.drawString(String.format(Locale.ROOT, "%,.0f req/s · stuck %,d · errors %,d · NPEs %,d", rate,
                        run.outcome().stuck(), run.outcome().errors(), run.log().npes()), LEFT + bar + 6,
                        y + ROW_HEIGHT / 2 + 4);
            }
            g.setColor(Color.DARK_GRAY);
            g.drawString("Green: no stuck request, no error, no NullPointerException in the server log, every request"
                    + " counted by the server; red: not so.", 20, height - 32);
            g.drawString("Rates include the connection's set-up and the server's JIT warm-up; this is a correctness"
                    + " run, not a throughput benchmark.", 20, height - 14);
        }, file);
    }
}
