package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's first command, for real: {@code java -jar server/target/pintle.jar demo} in a child process. Every
 * curl line it prints is run as printed by bash, and must print the status its comment announces.
 */
class DemoIT {
    private static final Pattern EXPECTATION = Pattern.compile("^# .* -> (\\d{3})$");

    @Test
    void everyCurlLineTheDemoPrintsWorksAsPrinted(@TempDir Path dir) throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        Path jar = Path.of("target/pintle.jar").toAbsolutePath();
        assertThat(jar).as("the shaded jar is built in the package phase, before integration tests").exists();
        String java = ProcessHandle.current().info().command().orElse("java");
        Path log = dir.resolve("demo.log");
        Process demo = new ProcessBuilder(java, "-jar", jar.toString(), "demo", "--dir", dir.resolve("sandbox").toString())
                .redirectError(log.toFile())
                .start();
        try {
            List<String> printed = CompletableFuture.supplyAsync(() -> readUntilServing(demo))
                    .get(120, TimeUnit.SECONDS);
            List<int[]> expected = new ArrayList<>();
            List<String> commands = new ArrayList<>();
            Integer pending = null;
            for (String line : printed) {
                Matcher matcher = EXPECTATION.matcher(line);
                if (matcher.matches()) {
                    pending = Integer.parseInt(matcher.group(1));
                } else if (line.startsWith("curl ")) {
                    assertThat(pending).as("a status announced before: " + line).isNotNull();
                    expected.add(new int[] {pending});
                    commands.add(line);
                    pending = null;
                }
            }
            assertThat(commands).hasSizeGreaterThanOrEqualTo(6);
            assertThat(String.join("\n", printed)).contains("--pinnedpubkey sha256//").contains("--etag-compare");
            for (int i = 0; i < commands.size(); i++) {
                Process curl = new ProcessBuilder("bash", "-c", commands.get(i)).start();
                String out = new String(curl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                String err = new String(curl.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(curl.waitFor(60, TimeUnit.SECONDS)).isTrue();
                String[] lines = out.strip().split("\n");
                assertThat(lines[lines.length - 1])
                        .as("last line of: %s%nstdout: %s%nstderr: %s", commands.get(i), out, err)
                        .isEqualTo(String.valueOf(expected.get(i)[0]));
                assertThat(curl.exitValue()).as(err).isZero();
            }
            assertThat(Files.readString(log)).doesNotContain("ERROR");
            // A demo starts without warnings; only a machine where Conscrypt does not load may add its own.
            assertThat(Files.readAllLines(log)).filteredOn(line -> line.contains(" WARN "))
                    .allMatch(line -> line.contains("fell back to the JDK's TLS"));
        } finally {
            demo.destroy();
            assertThat(demo.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    private static List<String> readUntilServing(Process process) {
        List<String> lines = new ArrayList<>();
        try {
            BufferedReader reader = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(line);
                if (line.startsWith("# Serving until Ctrl-C")) {
                    return lines;
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        throw new IllegalStateException("demo ended before serving; it printed: " + lines);
    }
}
