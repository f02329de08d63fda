package io.pintle.server.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A stand-in for {@code /opt/rudder/bin/rudder} from the test resources ({@code fake-agent.sh}, {@code
 * fake-rudder-remote-run.sh}): each run records its argv in {@code runs/<pid>.argv} next to the script (with its
 * pid, uid and times for {@code fake-agent.sh}), and control files next to it change what it does.
 *
 * @param program the installed script
 */
public record FakeAgent(Path program) {
    /**
     * Copies a stand-in into a directory of its own, executable by everyone.
     *
     * @param dir its directory (created)
     * @param resource {@code /fake-agent.sh} or {@code /fake-rudder-remote-run.sh}
     * @return the installed stand-in
     * @throws IOException on write errors
     */
    public static FakeAgent install(Path dir, String resource) throws IOException {
        Files.createDirectories(dir);
        Path program = dir.resolve("rudder");
        try (InputStream in = FakeAgent.class.getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            Files.copy(in, program, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwxr-xr-x"));
        return new FakeAgent(program);
    }

    /** @return the directory of its control files and runs */
    public Path dir() {
        return program.getParent();
    }

    /** @return its path, quoted as a TOML string */
    public String toml() {
        return "\"" + program + "\"";
    }

    /**
     * @return the argv of every run, oldest first (by the pid's file time: runs of one test are sequential or
     *     their order does not matter)
     * @throws IOException on read errors
     */
    public List<List<String>> runs() throws IOException {
        Path runs = dir().resolve("runs");
        if (!Files.isDirectory(runs)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(runs)) {
            List<List<String>> argvs = new ArrayList<>();
            for (Path file : files.filter(f -> f.toString().endsWith(".argv"))
                    .sorted(Comparator.comparing(FakeAgent::modified)).toList()) {
                String text = Files.readString(file);
                argvs.add(text.isEmpty() ? List.of() : List.of(text.split("\n")));
            }
            return argvs;
        }
    }

    /**
     * Forgets every run and removes the given control files.
     *
     * @param controls control file names ({@code sleep}, {@code exit-code}, ...)
     * @throws IOException on delete errors
     */
    public void reset(String... controls) throws IOException {
        for (String control : controls) {
            Files.deleteIfExists(dir().resolve(control));
        }
        Path runs = dir().resolve("runs");
        if (Files.isDirectory(runs)) {
            try (Stream<Path> files = Files.list(runs)) {
                for (Path file : files.toList()) {
                    Files.delete(file);
                }
            }
        }
    }

    private static java.nio.file.attribute.FileTime modified(Path file) {
        try {
            return Files.getLastModifiedTime(file);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
