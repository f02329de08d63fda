package io.pintle.server.http.admin;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import org.eclipse.jetty.util.StringUtil;

/**
 * The status page's HTML, from plain values: what a browser shows at {@code /} on the admin listener. One page,
 * inline CSS and an inline SVG chart, nothing fetched from anywhere; every text from a file or an operator is
 * escaped.
 */
final class StatusPage {
    /** Rows of the node table at most. */
    static final int MAX_ROWS = 50;
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
            .withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final int WIDTH = 880;
    private static final int HEIGHT = 220;
    private static final int LEFT = 48;
    private static final int BOTTOM = 28;
    private static final int TOP = 12;

    private StatusPage() {}

    /**
     * @param id the server's node id
     * @param role root, relay or node
     * @param generation the live snapshot's generation
     * @param loadedAt when it was built
     * @param applied reloads applied
     * @param unchanged reloads that found nothing new
     * @param failed reloads refused
     * @param lastFailure the last refused reload, or null
     * @param nodes nodes served
     * @param behind of which behind
     * @param silent of which silent
     * @param frozenCount of which frozen
     * @param lastGeneration when the served version last changed, or null
     * @param curve the samples to draw
     * @param rows behind or silent nodes
     * @param channels order channels, or null when remote run is off
     * @param freeze the freeze, or null
     */
    record Model(String id, String role, long generation, Instant loadedAt, long applied, long unchanged, long failed,
            Failure lastFailure, int nodes, int behind, int silent, int frozenCount, Instant lastGeneration,
            List<Point> curve, List<Row> rows, Channels channels, Frozen freeze) {}

    /** A refused reload. */
    record Failure(Instant at, String trigger, String error) {}

    /** A sample of the curve. */
    record Point(Instant time, int nodes, int current) {}

    /** A node in the table. */
    record Row(String id, String hostname, boolean behind, boolean silent, boolean frozen, Instant lastFetch,
            Instant lastRequest) {}

    /** The order channels. */
    record Channels(int polling, int awaited, int updatesPending, long updatesReleased) {}

    /** The freeze in force. */
    record Frozen(Instant since, int nodes, boolean all, boolean rollback, String reason) {}

    static String render(Model m, Instant now) {
        StringBuilder html = new StringBuilder(16 * 1024);
        html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<meta http-equiv=\"refresh\" content=\"30\">")
                .append("<title>Pintle ").append(escape(m.id())).append("</title><style>")
                .append("body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f4f6f8;color:#1d2733}")
                .append("header{background:#1d2733;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}")
                .append("header span{color:#9fb3c8;margin-left:12px}main{padding:16px 24px;max-width:960px}")
                .append(".cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:16px}")
                .append(".card{background:#fff;border-radius:8px;padding:12px 16px;min-width:120px;")
                .append("box-shadow:0 1px 2px rgba(0,0,0,.12)}.card b{display:block;font-size:26px}")
                .append(".ok b{color:#1a7f37}.warn b{color:#b35900}.bad b{color:#c62828}.info b{color:#1f5fa8}")
                .append("section{background:#fff;border-radius:8px;padding:12px 16px;margin-bottom:16px;")
                .append("box-shadow:0 1px 2px rgba(0,0,0,.12)}h2{font-size:16px;margin:0 0 8px}")
                .append("table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:4px 8px;")
                .append("border-bottom:1px solid #e3e8ee}th{color:#52606d;font-weight:600}")
                .append(".frozen{background:#e8f0fe;border-left:4px solid #1f5fa8}")
                .append(".failure{background:#fdecea;border-left:4px solid #c62828}")
                .append("code{font-size:12px}.muted{color:#52606d}</style></head><body>");
        html.append("<header><h1>Pintle <span>").append(escape(m.id())).append(" · ").append(escape(m.role()))
                .append(" · generation ").append(m.generation()).append(" · loaded ")
                .append(TIME.format(m.loadedAt())).append("</span></h1></header><main>");

        int current = m.nodes() - m.behind();
        html.append("<div class=\"cards\">");
        card(html, "info", "nodes served", Integer.toString(m.nodes()));
        card(html, m.behind() == 0 ? "ok" : "warn", "behind", Integer.toString(m.behind()));
        card(html, m.nodes() == 0 ? "ok" : current == m.nodes() ? "ok" : "warn", "on current policies",
                m.nodes() == 0 ? "–" : String.format(Locale.ROOT, "%.1f %%", 100.0 * current / m.nodes()));
        card(html, m.silent() == 0 ? "ok" : "bad", "silent", Integer.toString(m.silent()));
        card(html, m.freeze() == null ? "ok" : "info", "frozen", Integer.toString(m.frozenCount()));
        card(html, m.failed() == 0 ? "ok" : "bad", "reloads refused", Long.toString(m.failed()));
        html.append("</div>");

        if (m.freeze() != null) {
            Frozen f = m.freeze();
            html.append("<section class=\"frozen\" id=\"freeze\"><h2>Frozen</h2>")
                    .append(f.all() ? "Every node" : f.nodes() + " node(s)")
                    .append(f.rollback() ? " held on their previous generation" : " held on their policies")
                    .append(" since ").append(TIME.format(f.since())).append(" (")
                    .append(duration(Duration.between(f.since(), now))).append(")")
                    .append(f.reason() != null ? ": <q>" + escape(f.reason()) + "</q>" : "")
                    .append(". Release with <code>pintle freeze --release</code>.</section>");
        } else {
            html.append("<section id=\"freeze\"><h2>Freeze</h2>Nothing frozen.</section>");
        }

        html.append("<section><h2>Delivery of the last generation</h2>");
        html.append(m.lastGeneration() != null ? "<p class=\"muted\">Generation seen at "
                + TIME.format(m.lastGeneration()) + "; share of served nodes holding the policies served to them "
                + "now.</p>" : "<p class=\"muted\">No generation seen since start; share of served nodes holding "
                + "the policies served to them now.</p>");
        chart(html, m.curve(), m.lastGeneration());
        html.append("</section>");

        html.append("<section><h2>Nodes behind or silent</h2>");
        if (m.rows().isEmpty()) {
            html.append("<p>Every served node holds its current policies and was heard from recently.</p>");
        } else {
            html.append("<table><tr><th>node</th><th>hostname</th><th>state</th><th>last fetch</th>")
                    .append("<th>last request</th></tr>");
            for (Row row : m.rows()) {
                html.append("<tr><td><code>").append(escape(row.id())).append("</code></td><td>")
                        .append(escape(row.hostname())).append("</td><td>")
                        .append(row.behind() ? "behind" : "").append(row.behind() && row.silent() ? ", " : "")
                        .append(row.silent() ? "silent" : "").append(row.frozen() ? " (frozen)" : "")
                        .append("</td><td>").append(when(row.lastFetch(), now)).append("</td><td>")
                        .append(when(row.lastRequest(), now)).append("</td></tr>");
            }
            html.append("</table>");
            int total = Math.max(m.behind(), m.silent());
            if (m.rows().size() >= MAX_ROWS) {
                html.append("<p class=\"muted\">First ").append(MAX_ROWS).append(" shown; all of them: ")
                        .append("<code>pintle nodes --behind</code>, <code>GET /v1/nodes?behind=true</code>.</p>");
            } else if (total > m.rows().size()) {
                html.append("<p class=\"muted\">").append(total).append(" in all.</p>");
            }
        }
        html.append("</section>");

        html.append("<section><h2>Order channels</h2>");
        if (m.channels() == null) {
            html.append("Remote run is off.");
        } else {
            Channels c = m.channels();
            html.append(c.polling()).append(" node(s) holding a channel, ").append(c.awaited())
                    .append(" order(s) awaiting a report, ").append(c.updatesPending())
                    .append(" update order(s) pending, ").append(c.updatesReleased()).append(" sent since start.");
        }
        html.append("</section>");

        html.append("<section><h2>Reloads</h2>").append(m.applied()).append(" applied, ").append(m.unchanged())
                .append(" unchanged, ").append(m.failed()).append(" refused.");
        if (m.lastFailure() != null) {
            Failure f = m.lastFailure();
            html.append("<div class=\"failure\"><b>Last refused</b> at ").append(TIME.format(f.at())).append(" (")
                    .append(escape(f.trigger())).append("): ").append(escape(f.error())).append("</div>");
        }
        html.append("</section><p class=\"muted\">Rendered ").append(TIME.format(now))
                .append("; JSON: <code>/v1/status</code>, <code>/v1/nodes</code>, <code>/v1/delivery</code>, ")
                .append("<code>/metrics</code>.</p></main></body></html>\n");
        return html.toString();
    }

    private static void card(StringBuilder html, String kind, String label, String value) {
        html.append("<div class=\"card ").append(kind).append("\"><b>").append(value).append("</b>")
                .append(label).append("</div>");
    }

    /** The share of nodes on the current version over time, as an SVG line; the generation marked. */
    private static void chart(StringBuilder html, List<Point> curve, Instant generation) {
        int plotWidth = WIDTH - LEFT - 12;
        int plotHeight = HEIGHT - TOP - BOTTOM;
        html.append("<svg id=\"curve\" xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH)
                .append("\" height=\"").append(HEIGHT).append("\" viewBox=\"0 0 ").append(WIDTH).append(' ')
                .append(HEIGHT).append("\" role=\"img\" aria-label=\"share of nodes on the current version\">");
        for (int percent = 0; percent <= 100; percent += 25) {
            double y = TOP + plotHeight * (1 - percent / 100.0);
            html.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                    + "stroke=\"#e3e8ee\"/><text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" "
                    + "fill=\"#52606d\">%d%%</text>", LEFT, y, LEFT + plotWidth, y, LEFT - 6, y + 4, percent));
        }
        if (curve.size() < 2) {
            html.append("<text x=\"").append(LEFT + plotWidth / 2).append("\" y=\"").append(TOP + plotHeight / 2)
                    .append("\" text-anchor=\"middle\" fill=\"#52606d\">")
                    .append("collecting samples</text></svg>");
            return;
        }
        long start = curve.get(0).time().toEpochMilli();
        long span = Math.max(1, curve.get(curve.size() - 1).time().toEpochMilli() - start);
        StringBuilder points = new StringBuilder();
        for (Point point : curve) {
            double share = point.nodes() == 0 ? 1.0 : point.current() / (double) point.nodes();
            double x = LEFT + plotWidth * (point.time().toEpochMilli() - start) / (double) span;
            double y = TOP + plotHeight * (1 - share);
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        }
        if (generation != null && generation.toEpochMilli() >= start) {
            double x = LEFT + plotWidth * (generation.toEpochMilli() - start) / (double) span;
            html.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                    + "stroke=\"#b35900\" stroke-dasharray=\"4 3\"/><text x=\"%.1f\" y=\"%d\" font-size=\"11\" "
                    + "fill=\"#b35900\">generation</text>", x, TOP, x, TOP + plotHeight, x + 4, TOP + 12));
        }
        html.append("<polyline fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"2\" points=\"")
                .append(points.toString().strip()).append("\"/>");
        html.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#52606d\">%s</text>"
                + "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\" fill=\"#52606d\">%s UTC</text>",
                LEFT, HEIGHT - 8, CLOCK.format(curve.get(0).time()), LEFT + plotWidth, HEIGHT - 8,
                CLOCK.format(curve.get(curve.size() - 1).time())));
        html.append("</svg>");
    }

    private static String when(Instant time, Instant now) {
        return time == null ? "never" : duration(Duration.between(time, now)) + " ago";
    }

    private static String duration(Duration d) {
        long seconds = Math.max(0, d.toSeconds());
        if (seconds < 120) {
            return seconds + " s";
        }
        if (seconds < 7200) {
            return seconds / 60 + " min";
        }
        if (seconds < 172_800) {
            return seconds / 3600 + " h";
        }
        return seconds / 86_400 + " days";
    }

    /** HTML-escapes text (element content and quoted attribute values; control characters replaced). */
    static String escape(String text) {
        return text == null ? "" : StringUtil.sanitizeXmlString(text);
    }
}
