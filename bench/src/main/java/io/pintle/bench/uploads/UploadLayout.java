package io.pintle.bench.uploads;

import io.pintle.server.demo.DemoLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What both servers get: {@code pintle demo}'s layout (server key, configuration, and, once Pintle has them, its
 * {@code [uploads]} table and {@code server/webdav.password}), the reports the agents send, and one htpasswd file
 * for both servers.
 *
 * <p>The htpasswd file is written by Apache's own {@code htpasswd -b -c -m} (apache2-utils): MD5 {@code $apr1$},
 * the tool's default and what Rudder's files hold, which nginx's {@code auth_basic} reads too (it does not read
 * bcrypt). Pintle's {@code [uploads] htpasswd} is pointed at it, so both servers check the same hash.
 *
 * @param demo the demo layout
 * @param reports the directory of the reports to send (their names are what the agents send)
 * @param names the reports' file names, {@code <ISO-8601 date>@<uuid>.log.gz}
 * @param password the {@code rudder} user's password (the demo's {@code server/webdav.password} when it exists)
 * @param htpasswd the htpasswd file both servers read
 * @param pintleReports Pintle's {@code [uploads] reports} directory, when its demo has an {@code [uploads]} table
 */
record UploadLayout(DemoLayout demo, Path reports, List<String> names, String password, Path htpasswd,
        Optional<Path> pintleReports) {
    static final String USER = "rudder";
    private static final long SEED = 0x75706c64L;
    private static final Pattern UPLOADS_TABLE = Pattern.compile("(?ms)^\\[uploads\\][ \\t]*$(.*?)(?=^\\[|\\z)");
    private static final Pattern REPORTS_KEY = Pattern.compile("(?m)^reports\\s*=\\s*\"([^\"]+)\"[ \\t]*$");
    /** {@code htpasswd} alone: {@code htpasswd_initial} is another key. */
    private static final Pattern HTPASSWD_KEY = Pattern.compile("(?m)^htpasswd\\s*=\\s*\"[^\"]*\"[ \\t]*$");

    static UploadLayout create(Path directory, int uploads, int bytes) throws IOException, InterruptedException {
        DemoLayout demo = DemoLayout.create(directory, 0);
        Path dir = demo.directory();
        Path passwordFile = dir.resolve("server/webdav.password");
        String password = Files.exists(passwordFile) ? Files.readString(passwordFile).strip()
                : "bench-" + Long.toHexString(new Random().nextLong());
        Path htpasswd = dir.resolve("server/bench-htpasswd");
        Process process = new ProcessBuilder("htpasswd", "-b", "-c", "-m", htpasswd.toString(), USER, password)
                .redirectErrorStream(true).start();
        String said = new String(process.getInputStream().readAllBytes()).strip();
        if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException("htpasswd (apache2-utils) failed: " + said);
        }

        String config = Files.readString(demo.config());
        Optional<Path> pintleReports = Optional.empty();
        Matcher table = UPLOADS_TABLE.matcher(config);
        if (table.find()) {
            Matcher reports = REPORTS_KEY.matcher(table.group(1));
            if (!reports.find()) {
                throw new IOException("no 'reports' key in the [uploads] table of " + demo.config());
            }
            pintleReports = Optional.of(dir.resolve(reports.group(1)).normalize());
            Matcher key = HTPASSWD_KEY.matcher(table.group(1));
            if (!key.find()) {
                throw new IOException("no 'htpasswd' key in the [uploads] table of " + demo.config());
            }
            // The reports are random bytes for random nodes (the store's cost against nginx's, as before the edge
            // check): verify_signatures off, so the figures stay comparable. Its cost is not measured here.
            String uploadsTable = key.replaceFirst(Matcher.quoteReplacement("htpasswd = \"" + htpasswd
                    + "\"\nverify_signatures = false"));
            config = config.substring(0, table.start(1)) + uploadsTable + config.substring(table.end(1));
            Files.writeString(demo.config(), config);
            Files.createDirectories(pintleReports.get());
        }

        // Rudder's report names: <date>@<node uuid>.log.gz; ':' '+' '@' are part of them. Random bytes, as
        // incompressible as the gzip'd logs they stand for.
        Path reports = Files.createDirectories(dir.resolve("agent-reports"));
        Random random = new Random(SEED);
        Instant start = Instant.parse("2026-12-04T10:00:00Z");
        DateTimeFormatter iso = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ssxxx").withZone(ZoneOffset.UTC);
        List<String> names = new ArrayList<>(uploads);
        byte[] body = new byte[bytes];
        for (int i = 0; i < uploads; i++) {
            String name = iso.format(start.plus(i, ChronoUnit.SECONDS)) + "@"
                    + new UUID(random.nextLong(), random.nextLong()) + ".log.gz";
            random.nextBytes(body);
            Files.write(reports.resolve(name), body);
            names.add(name);
        }
        return new UploadLayout(demo, reports, List.copyOf(names), password, htpasswd, pintleReports);
    }

    /** @return the hash scheme of the htpasswd file's entry, as written */
    String hashScheme() throws IOException {
        String line = Files.readString(htpasswd).strip();
        String hash = line.substring(line.indexOf(':') + 1);
        return hash.startsWith("$apr1$") ? "MD5 $apr1$ (htpasswd -m)" : hash.substring(0, Math.min(6, hash.length()));
    }

    /** @return the demo server's certificate (PEM) */
    Path certificate() {
        return demo.directory().resolve("server/agent.cert");
    }

    /** @return the demo server's private key (PEM) */
    Path key() {
        return demo.directory().resolve("server/localhost.priv");
    }

    /**
     * @param name a report's file name
     * @return it as curl appends it to a URL ending in {@code /} ({@code curl_easy_escape}: every byte but
     *     letters, digits and {@code -._~} percent-encoded, lower-case hex)
     */
    static String urlName(String name) {
        StringBuilder out = new StringBuilder();
        for (byte b : name.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
                out.append(c);
            } else {
                out.append('%').append(String.format(java.util.Locale.ROOT, "%02x", b & 0xff));
            }
        }
        return out.toString();
    }
}
