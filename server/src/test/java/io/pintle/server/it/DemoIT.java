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
 * The README's first command, for real: {@code java -jar server/target/pintle.jar demo} (and {@code demo --ca}) in a
 * child process. Every curl line it prints is run as printed by bash, and must print the status its comment
 * announces.
 */
class DemoIT {
    private static final Pattern EXPECTATION = Pattern.compile("^# .* -> (\\d{3})$");
    /** curl's exit status when {@code --fail} meets an HTTP error (a refusal rudder-client's flags print so). */
    private static final int CURL_HTTP_ERROR = 22;
    /** An access log line in the common format: client, -, node or -, [time], "request line", status. */
    private static final Pattern COMMON_LINE = Pattern.compile(
            "\\S+ - \\S+ \\[\\d{2}/\\w{3}/\\d{4}:\\d{2}:\\d{2}:\\d{2} \\+0000\\] \"[A-Z]+ \\S+ HTTP/[\\d.]+\" \\d{3} .*");

    @Test
    void everyCurlLineTheDemoPrintsWorksAsPrinted(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("demo.log");
        Demo demo = runDemo(log, "demo", "--dir", dir.resolve("sandbox").toString());
        assertThat(demo.commands()).hasSizeGreaterThanOrEqualTo(6);
        assertThat(String.join("\n", demo.printed())).contains("--pinnedpubkey sha256//").contains("--etag-compare");
        // Who is behind: the Linux node that downloaded its archive is not; nodes that fetched nothing are.
        int behind = demo.commands().indexOf(demo.commands().stream().filter(line -> line.contains("behind=true"))
                .findFirst().orElseThrow());
        com.fasterxml.jackson.databind.JsonNode nodes = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(demo.outputs().get(behind).strip().replaceAll("\n\\d+$", ""));
        String downloaded = demo.commands().get(0).replaceAll(".*/policies/([^/]+)/.*", "$1");
        assertThat(nodes.path("total").asInt()).isGreaterThanOrEqualTo(3);
        assertThat(nodes.path("nodes")).extracting(node -> node.path("id").asText()).isNotEmpty()
                .doesNotContain(downloaded);
        assertThat(Files.readString(log)).doesNotContain("ERROR");
        // The shipped logback.xml's access log reaches stderr (WholeLinesTest checks it takes the whole way): a
        // line per curl, written out by the stop, in the common format, the node's id on the archive's download.
        assertThat(Files.readAllLines(log)).filteredOn(line -> COMMON_LINE.matcher(line).matches())
                .hasSizeGreaterThanOrEqualTo(demo.commands().size())
                .anyMatch(line -> line.contains(" - " + downloaded + " [") && line.contains(" 200 "));
        // A demo starts without warnings; only a machine where Conscrypt does not load may add its own.
        assertThat(Files.readAllLines(log)).filteredOn(line -> line.contains(" WARN "))
                .allMatch(line -> line.contains("fell back to the JDK's TLS"));
    }

    /**
     * {@code pintle demo --ca}: rudder-client's curl in certificate-validation mode verifies the server against the
     * CA and its address, and the server trusts the nodes by their CA-signed chains.
     */
    @Test
    void everyCurlLineTheCaDemoPrintsWorksAsPrinted(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("demo.log");
        Path sandbox = dir.resolve("sandbox");
        Demo demo = runDemo(log, "demo", "--ca", "--dir", sandbox.toString());
        String printed = String.join("\n", demo.printed());
        assertThat(printed).contains("certificate-validation mode").contains(sandbox.resolve("ca").toString())
                .doesNotContain("--pinnedpubkey").doesNotContain("--insecure").doesNotContain("--user");
        String rudderClient = "curl --tlsv1.3 --location --fail --connect-timeout 10 --noproxy '*' --cacert "
                + sandbox.resolve("ca/policy_server_ca.pem") + " --silent --show-error ";
        assertThat(demo.commands()).hasSizeGreaterThanOrEqualTo(8).allMatch(line -> line.startsWith(rudderClient));
        assertThat(demo.statuses()).containsSubsequence(200, 200, 403, 403, 200, 403, 201);
        assertThat(demo.outputs()).anyMatch(out -> out.contains("\"reason\":\"revoked"))
                .anyMatch(out -> out.contains("\"authenticated_by\":\"cert_validation\""));
        try (var inventories = Files.list(sandbox.resolve("inventories/incoming"))) {
            assertThat(inventories.map(file -> file.getFileName().toString())).anyMatch(name -> name.endsWith(".ocs"));
        }
        String logged = Files.readString(log);
        assertThat(logged).doesNotContain("ERROR").contains(" auth=cert_validation").contains("denied:revoked")
                .contains("denied:no-certificate").contains("denied:uid-mismatch");
        assertThat(Files.readAllLines(log)).filteredOn(line -> line.contains(" WARN "))
                .allMatch(line -> line.contains("fell back to the JDK's TLS"));
    }

    /**
     * What a demo printed and what its curl lines answered.
     *
     * @param printed its standard output up to the serving line
     * @param commands its curl lines
     * @param statuses the status each announced (and printed)
     * @param outputs what each printed
     */
    private record Demo(List<String> printed, List<String> commands, List<Integer> statuses, List<String> outputs) {}

    /**
     * Starts the packaged jar with these arguments, runs every curl line it prints with bash and checks each prints
     * the status its comment announces (curl's {@code --fail} exits 22 on the refusals), then stops it.
     */
    private static Demo runDemo(Path log, String... arguments) throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        Path jar = Path.of("target/pintle.jar").toAbsolutePath();
        assertThat(jar).as("the shaded jar is built in the package phase, before integration tests").exists();
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> argv = new ArrayList<>(List.of(java, "-jar", jar.toString()));
        argv.addAll(List.of(arguments));
        Process demo = new ProcessBuilder(argv).redirectError(log.toFile()).start();
        try {
            List<String> printed = CompletableFuture.supplyAsync(() -> readUntilServing(demo))
                    .get(120, TimeUnit.SECONDS);
            List<Integer> expected = new ArrayList<>();
            List<String> commands = new ArrayList<>();
            Integer pending = null;
            for (String line : printed) {
                Matcher matcher = EXPECTATION.matcher(line);
                if (matcher.matches()) {
                    pending = Integer.parseInt(matcher.group(1));
                } else if (line.startsWith("curl ")) {
                    assertThat(pending).as("a status announced before: " + line).isNotNull();
                    expected.add(pending);
                    commands.add(line);
                    pending = null;
                }
            }
            List<String> outputs = new ArrayList<>();
            for (int i = 0; i < commands.size(); i++) {
                Process curl = new ProcessBuilder("bash", "-c", commands.get(i)).start();
                String out = new String(curl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                String err = new String(curl.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(curl.waitFor(60, TimeUnit.SECONDS)).isTrue();
                String[] lines = out.strip().split("\n");
                assertThat(lines[lines.length - 1])
                        .as("last line of: %s%nstdout: %s%nstderr: %s", commands.get(i), out, err)
                        .isEqualTo(String.valueOf(expected.get(i)));
                boolean failing = expected.get(i) >= 400 && commands.get(i).contains(" --fail ");
                assertThat(curl.exitValue()).as("exit status of: %s%nstderr: %s", commands.get(i), err)
                        .isEqualTo(failing ? CURL_HTTP_ERROR : 0);
                outputs.add(out);
            }
            return new Demo(printed, commands, expected, outputs);
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
