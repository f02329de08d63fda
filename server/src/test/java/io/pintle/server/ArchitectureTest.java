package io.pintle.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * Only {@code http}, {@code tls} and {@code cfengine} (and the composition root) know the web stack; the domain
 * packages are plain Java and never reach up into {@code http}. Every package is listed here with its side, so a new one is placed on
 * purpose. Requests reach Jersey's resources through the request's exchange, never by injecting Jetty's request.
 * And no static mutable state anywhere in main code.
 */
class ArchitectureTest {
    private static final Path MAIN = Path.of("src/main/java/io/pintle/server");
    private static final Pattern WEB_IMPORT =
            Pattern.compile("^import\\s+(static\\s+)?(jakarta\\.ws\\.rs|org\\.glassfish|org\\.eclipse\\.jetty)\\.", Pattern.MULTILINE);
    private static final Pattern STATIC_FIELD = Pattern.compile(
            "^\\s*(?:private|public|protected)?\\s*static\\s+(?!final)(?!class|record|enum|interface)[\\w<>\\[\\]., ?]+\\s+\\w+\\s*[=;]",
            Pattern.MULTILINE);

    /** The packages that know the web stack. */
    private static final Set<String> WEB = Set.of("http", "tls", "cfengine");
    /** The plain-Java packages: the domain, and what runs it (config, cli, demo, metrics, systemd). */
    private static final Set<String> DOMAIN = Set.of("access", "acl", "nodes", "policy", "reload", "config",
            "problem", "demo", "cli", "metrics", "overload", "systemd", "remoterun", "sharedfiles", "threads", "delivery",
            "upstream", "uploads", "watch", "logging");
    private static final Pattern HTTP_IMPORT = Pattern.compile("^import\\s+(static\\s+)?io\\.pintle\\.server\\.http\\.",
            Pattern.MULTILINE);
    private static final Pattern INJECTED_REQUEST = Pattern.compile(
            "@(Inject|Context)\\s+(private\\s+|final\\s+)*(Provider<)?[\\w.]*\\bRequest\\b", Pattern.MULTILINE);

    @Test
    void everyPackageIsPlacedOnOneSide() throws IOException {
        Set<String> packages = new TreeSet<>();
        try (Stream<Path> dirs = Files.list(MAIN)) {
            dirs.filter(Files::isDirectory).forEach(dir -> packages.add(dir.getFileName().toString()));
        }
        Set<String> listed = new TreeSet<>(WEB);
        listed.addAll(DOMAIN);
        assertThat(packages).isEqualTo(listed);
    }

    @ParameterizedTest
    @MethodSource("domainPackages")
    void domainPackagesNeverImportTheHttpLayer(String pkg) throws IOException {
        List<String> offenders = new ArrayList<>();
        for (Path file : javaFiles(MAIN.resolve(pkg))) {
            Matcher matcher = HTTP_IMPORT.matcher(Files.readString(file));
            while (matcher.find()) {
                offenders.add(file + ": " + matcher.group());
            }
        }
        assertThat(offenders).isEmpty();
    }

    /** The web layer's families: what {@code http.edge}'s one dispatch step hands a request to, and the edge. */
    private static final Set<String> HTTP_FAMILIES = Set.of("edge", "files", "orders", "webapp", "jersey", "admin");
    private static final Pattern HTTP_FAMILY_IMPORT = Pattern.compile(
            "^import\\s+(?:static\\s+)?io\\.pintle\\.server\\.http\\.([a-z]+)\\.", Pattern.MULTILINE);

    @Test
    void httpIsSplitByFamily() throws IOException {
        Set<String> families = new TreeSet<>();
        try (Stream<Path> dirs = Files.list(MAIN.resolve("http"))) {
            dirs.filter(Files::isDirectory).forEach(dir -> families.add(dir.getFileName().toString()));
        }
        assertThat(families).isEqualTo(new TreeSet<>(HTTP_FAMILIES));
    }

    /**
     * A family knows the shared {@code http} package and no other family: only the edge, which assembles the
     * server and dispatches to them, knows them all; the Jersey application builds the admin one from its
     * resources. The shared package knows no family.
     */
    @Test
    void httpFamiliesDoNotKnowOneAnother() throws IOException {
        List<String> offenders = new ArrayList<>();
        try (Stream<Path> files = Files.walk(MAIN.resolve("http"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Path relative = MAIN.resolve("http").relativize(file);
                String family = relative.getNameCount() == 1 ? "" : relative.getName(0).toString();
                Matcher matcher = HTTP_FAMILY_IMPORT.matcher(Files.readString(file));
                while (matcher.find()) {
                    String imported = matcher.group(1);
                    boolean allowed = imported.equals(family) || family.equals("edge")
                            || family.equals("jersey") && imported.equals("admin");
                    if (!allowed) {
                        offenders.add(file + ": " + matcher.group().strip());
                    }
                }
            }
        }
        assertThat(offenders).isEmpty();
    }

    @Test
    void noRequestIsInjected() throws IOException {
        List<String> offenders = new ArrayList<>();
        for (Path file : javaFiles(MAIN)) {
            Matcher matcher = INJECTED_REQUEST.matcher(Files.readString(file));
            while (matcher.find()) {
                offenders.add(file + ": " + matcher.group());
            }
        }
        assertThat(offenders).isEmpty();
    }

    static Stream<String> domainPackages() {
        return DOMAIN.stream().sorted();
    }

    @ParameterizedTest
    @MethodSource("domainPackages")
    void domainPackagesDoNotImportTheWebStack(String pkg) throws IOException {
        List<String> offenders = new ArrayList<>();
        for (Path file : javaFiles(MAIN.resolve(pkg))) {
            Matcher matcher = WEB_IMPORT.matcher(Files.readString(file));
            while (matcher.find()) {
                offenders.add(file + ": " + matcher.group());
            }
        }
        assertThat(javaFiles(MAIN.resolve(pkg))).isNotEmpty();
        assertThat(offenders).isEmpty();
    }

    @Test
    void mainCodeHasNoStaticMutableFields() throws IOException {
        List<String> offenders = new ArrayList<>();
        for (Path file : javaFiles(MAIN)) {
            Matcher matcher = STATIC_FIELD.matcher(Files.readString(file));
            while (matcher.find()) {
                offenders.add(file + ": " + matcher.group().strip());
            }
        }
        assertThat(offenders).isEmpty();
    }

    @Test
    void everyServerPackageDocumentsItsResponsibility() throws IOException {
        try (Stream<Path> dirs = Files.walk(MAIN)) {
            List<Path> missing = dirs.filter(Files::isDirectory)
                    .filter(dir -> !Files.exists(dir.resolve("package-info.java")))
                    .toList();
            assertThat(missing).isEmpty();
        }
    }

    private static List<Path> javaFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(f -> f.toString().endsWith(".java")).toList();
        }
    }
}
