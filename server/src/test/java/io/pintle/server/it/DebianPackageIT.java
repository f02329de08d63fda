package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.ar.ArArchiveEntry;
import org.apache.commons.compress.archivers.ar.ArArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The .deb the package phase builds (jdeb, server/pom.xml), opened as dpkg would: control fields, maintainer
 * scripts, conffiles and every file with its mode and owner. A broken package fails {@code mvn verify} here, before
 * .ci/run installs it. The directories of deploy/ are compared whole, so a file added there must reach the package.
 */
class DebianPackageIT {
    private static final Path DEPLOY = Path.of("../deploy").toAbsolutePath().normalize();
    private static final Pattern CONTROL_FIELD = Pattern.compile("^([A-Za-z-]+): ?(.*)$");

    /** One entry of the data archive: its mode bits, owner and, for a file, its bytes. */
    record Entry(int mode, long uid, long gid, boolean isDirectory, byte[] content) {}

    private static Path deb;
    private static Map<String, String> control;
    private static Map<String, byte[]> controlFiles;
    private static Map<String, Integer> controlModes;
    private static Map<String, Entry> data;

    @BeforeAll
    static void openThePackage() throws IOException {
        List<Path> debs;
        try (Stream<Path> files = Files.list(Path.of("target"))) {
            debs = files.filter(p -> p.getFileName().toString().matches("pintle_.*_all\\.deb")).toList();
        }
        assertThat(debs).as("one pintle_<version>_all.deb, built in the package phase").hasSize(1);
        deb = debs.get(0);
        controlFiles = new LinkedHashMap<>();
        controlModes = new LinkedHashMap<>();
        data = new LinkedHashMap<>();
        List<String> members = new ArrayList<>();
        try (ArArchiveInputStream ar = new ArArchiveInputStream(new BufferedInputStream(Files.newInputStream(deb)))) {
            for (ArArchiveEntry member; (member = ar.getNextEntry()) != null; ) {
                members.add(member.getName());
                if (member.getName().equals("debian-binary")) {
                    assertThat(new String(ar.readAllBytes(), StandardCharsets.US_ASCII)).isEqualTo("2.0\n");
                } else if (member.getName().startsWith("control.tar")) {
                    readTar(member.getName(), ar, (entry, bytes) -> {
                        controlFiles.put(relative(entry), bytes);
                        controlModes.put(relative(entry), entry.getMode() & 07777);
                    });
                } else if (member.getName().startsWith("data.tar")) {
                    readTar(member.getName(), ar, (entry, bytes) -> data.put("/" + relative(entry),
                            new Entry(entry.getMode() & 07777, entry.getLongUserId(), entry.getLongGroupId(),
                            entry.isDirectory(), bytes)));
                }
            }
        }
        // dpkg requires this order: debian-binary first, then control, then data.
        assertThat(members).hasSize(3);
        assertThat(members.get(0)).isEqualTo("debian-binary");
        assertThat(members.get(1)).startsWith("control.tar");
        assertThat(members.get(2)).startsWith("data.tar");
        control = fields(new String(controlFiles.get("control"), StandardCharsets.UTF_8));
    }

    @Test
    void controlFieldsNameAnArchitectureIndependentPackageThatNeedsJava17() {
        String version = System.getProperty("pintle.version", "");
        assertThat(version).as("pintle.version, set by failsafe from the pom").isNotEmpty();
        // jdeb's rule: a Maven SNAPSHOT sorts before its release in dpkg's order ("~").
        String debianVersion = version.replace('-', '~');
        assertThat(control).containsEntry("Package", "pintle")
                .containsEntry("Version", debianVersion)
                .containsEntry("Architecture", "all")
                .containsKeys("Maintainer", "Description");
        assertThat(deb.getFileName().toString()).isEqualTo("pintle_" + debianVersion + "_all.deb");
        // Debian's openjdk-17, -21, -25 (and Temurin's packages) all provide java17-runtime-headless.
        assertThat(control.get("Depends")).contains("java17-runtime-headless");
    }

    @Test
    void installsTheJarTheWrapperFindsAndTheWrapperTheUnitsRun() throws IOException {
        Entry jar = data.get("/usr/share/pintle/pintle.jar");
        assertThat(jar).as("the jar").isNotNull();
        assertThat(jar.content()).isEqualTo(Files.readAllBytes(Path.of("target/pintle.jar")));
        Entry wrapper = data.get("/usr/bin/pintle");
        assertThat(wrapper).as("the wrapper on PATH").isNotNull();
        assertThat(wrapper.mode()).isEqualTo(0755);
        String script = new String(wrapper.content(), StandardCharsets.UTF_8);
        assertThat(script).as("the wrapper's default jar: /usr/bin/../share/pintle/pintle.jar")
                .contains("\"$here/../share/pintle/pintle.jar\"");
        int commands = 0;
        for (String unit : List.of("pintle.service", "pintle-agent@.service")) {
            String service = new String(data.get("/usr/lib/systemd/system/" + unit).content(), StandardCharsets.UTF_8);
            Matcher exec = Pattern.compile("(?m)^Exec(?:Start|Reload)=[-@+!]*(\\S+)").matcher(service);
            while (exec.find()) {
                commands++;
                Entry program = data.get(exec.group(1));
                assertThat(program).as(unit + " " + exec.group(0) + ": a program the package installs").isNotNull();
                assertThat(program.mode()).as(exec.group(1) + " is executable, root's to change").isEqualTo(0755);
            }
        }
        assertThat(commands).as("ExecStart and ExecReload, the helper's ExecStart").isGreaterThanOrEqualTo(3);
    }

    @Test
    void packagesEveryFileOfDeploysSystemSnippetDirectories() throws IOException {
        expectDirectory("systemd", "/usr/lib/systemd/system/", 0644);
        expectDirectory("sysusers.d", "/usr/lib/sysusers.d/", 0644);
        expectDirectory("tmpfiles.d", "/usr/lib/tmpfiles.d/", 0644);
        expectDirectory("sudoers.d", "/etc/sudoers.d/", 0440);
        assertThat(data).containsKeys("/usr/lib/systemd/system/pintle.service", "/usr/lib/systemd/system/pintle.socket",
                "/usr/lib/sysusers.d/pintle.conf");
    }

    @Test
    void theRelaysDropInForRelaydIsShippedInactive() {
        // It stops relayd: installed active it would do so on a root too, where relayd writes the reports into the
        // database. It is shipped where systemd does not read it; an administrator copies it on a relay.
        assertThat(data).containsKey("/usr/share/pintle/relay/rudder-relayd.service.d/pintle-relay.conf");
        assertThat(data.keySet()).noneMatch(path -> path.contains("rudder-relayd") && !path.startsWith("/usr/share/"));
    }

    @Test
    void everyFileUnderEtcIsAConffileAndTheConfigurationSetsNothing() throws IOException {
        List<String> conffiles = new String(controlFiles.get("conffiles"), StandardCharsets.UTF_8).lines().toList();
        List<String> etc = data.keySet().stream().filter(p -> p.startsWith("/etc/") && !data.get(p).isDirectory()).toList();
        assertThat(conffiles).as("Debian policy 10.7.2: every file in /etc is a conffile").containsExactlyInAnyOrderElementsOf(etc);
        assertThat(conffiles).contains("/etc/pintle/pintle.toml");
        String configuration = new String(data.get("/etc/pintle/pintle.toml").content(), StandardCharsets.UTF_8);
        assertThat(configuration.lines().filter(l -> !l.isBlank() && !l.startsWith("#")))
                .as("commented out, Rudder's defaults apply, but for the agent helper the package installs")
                .containsExactly("[remote_run]", "agent_socket = \"/run/pintle-agent.sock\"");
        String socket = new String(data.get("/usr/lib/systemd/system/pintle-agent.socket").content(),
                StandardCharsets.UTF_8);
        assertThat(socket).contains("ListenStream=/run/pintle-agent.sock\n", "SocketGroup=pintle\n",
                "SocketMode=0660\n", "Accept=yes\n");
        assertThat(data).containsKeys("/usr/share/doc/pintle/README.md", "/usr/share/doc/pintle/MIGRATING-FROM-RUDDER.md",
                "/usr/share/doc/pintle/pintle.example.toml");
    }

    @Test
    void maintainerScriptsStartNothing() {
        for (String script : List.of("postinst", "prerm", "postrm")) {
            assertThat(controlFiles).containsKey(script);
            assertThat(controlModes.get(script)).as(script + " mode").isEqualTo(0755);
            String text = new String(controlFiles.get(script), StandardCharsets.UTF_8);
            assertThat(text).startsWith("#!/bin/sh\n").contains("set -e");
            // Commands only: comments and quoted messages (a hint to restart by hand) may name any command.
            String commands = text.replaceAll("\"[^\"]*\"", "\"\"").replaceAll("(?m)^\\s*#.*$", "");
            assertThat(commands).as(script + " neither starts nor enables a unit")
                    .doesNotContainPattern("systemctl\\s+(?:--\\S+\\s+)*(?:start|enable|restart|reload-or-restart|try-restart)\\b");
        }
    }

    @Test
    void everythingIsOwnedByRoot() {
        assertThat(data.entrySet()).allSatisfy(e -> {
            assertThat(e.getValue().uid()).as(e.getKey()).isZero();
            assertThat(e.getValue().gid()).as(e.getKey()).isZero();
            assertThat(e.getValue().mode() & 0022).as(e.getKey() + " writable by root only").isZero();
        });
    }

    /** Every regular file of deploy/{dir}, byte for byte, at {prefix}{name}; nothing there if the directory is absent. */
    private static void expectDirectory(String dir, String prefix, int mode) throws IOException {
        Path source = DEPLOY.resolve(dir);
        List<String> packaged = data.keySet().stream()
                .filter(p -> p.startsWith(prefix) && p.length() > prefix.length() && !data.get(p).isDirectory())
                .toList();
        if (!Files.isDirectory(source)) {
            assertThat(packaged).as(prefix + " with no deploy/" + dir).isEmpty();
            return;
        }
        List<Path> files;
        try (Stream<Path> list = Files.list(source)) {
            files = list.filter(Files::isRegularFile).toList();
        }
        assertThat(packaged).as(prefix).containsExactlyInAnyOrderElementsOf(
                files.stream().map(f -> prefix + f.getFileName()).toList());
        for (Path file : files) {
            Entry entry = data.get(prefix + file.getFileName());
            assertThat(entry.content()).as(file.toString()).isEqualTo(Files.readAllBytes(file));
            assertThat(entry.mode()).as(prefix + file.getFileName() + " mode").isEqualTo(mode);
        }
    }

    private interface TarVisitor {
        void visit(TarArchiveEntry entry, byte[] content) throws IOException;
    }

    private static void readTar(String name, InputStream member, TarVisitor visitor) throws IOException {
        InputStream raw = new BufferedInputStream(member) {
            @Override
            public void close() {
                // The ar stream goes on to the next member.
            }
        };
        InputStream in;
        if (name.endsWith(".gz")) {
            in = new GzipCompressorInputStream(raw);
        } else if (name.endsWith(".tar")) {
            in = raw;
        } else {
            throw new AssertionError(name + ": this test reads gzip or uncompressed members (jdeb's default is gzip)");
        }
        try (TarArchiveInputStream tar = new TarArchiveInputStream(in)) {
            for (TarArchiveEntry entry; (entry = tar.getNextEntry()) != null; ) {
                visitor.visit(entry, entry.isDirectory() ? DIRECTORY : tar.readAllBytes());
            }
        }
    }

    private static final byte[] DIRECTORY = new byte[0];

    private static String relative(TarArchiveEntry entry) {
        String name = entry.getName();
        name = name.startsWith("./") ? name.substring(2) : name;
        return name.endsWith("/") ? name.substring(0, name.length() - 1) : name;
    }

    private static Map<String, String> fields(String text) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : text.lines().toList()) {
            Matcher field = CONTROL_FIELD.matcher(line);
            if (field.matches()) {
                fields.put(field.group(1), field.group(2).strip());
            }
        }
        return fields;
    }
}
