package io.pintle.server.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The server as a separate process, as an administrator runs it: {@code java -jar target/pintle.jar ...}. */
public final class ServerProcess {
    /** The start-up line, whose group 1 is the TLS listener's URL. */
    public static final Pattern SERVING = Pattern.compile("serving .* on (https://127\\.0\\.0\\.1:\\d+) ");

    private ServerProcess() {}

    /** @return the java launcher of this JVM */
    public static String java() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    /** @return the shaded jar (the test fails when the build did not make it) */
    public static String jar() {
        Path jar = Path.of("target/pintle.jar").toAbsolutePath();
        assertThat(jar).as("the shaded jar is built in the package phase, before integration tests").exists();
        return jar.toString();
    }

    /**
     * @param log the process's output
     * @param process the server
     * @return the TLS listener's URL, once the server logs it (the test fails if it exits first or after 60 s)
     * @throws Exception on I/O errors or interruption
     */
    public static String awaitServing(Path log, Process process) throws Exception {
        return awaitLog(log, SERVING, process);
    }

    /**
     * @param log the process's output
     * @param pattern what to wait for
     * @param process the server
     * @return the pattern's group 1, once the log has it (the test fails if the server exits first or after 60 s)
     * @throws Exception on I/O errors or interruption
     */
    public static String awaitLog(Path log, Pattern pattern, Process process) throws Exception {
        String[] found = {null};
        Await.until(Duration.ofSeconds(60), () -> "the server logs " + pattern + ": " + read(log), () -> {
            String text = read(log);
            Matcher matcher = pattern.matcher(text);
            if (matcher.find()) {
                found[0] = matcher.group(1);
                return true;
            }
            assertThat(process.isAlive()).as("server exited: %s", text).isTrue();
            return false;
        });
        return found[0];
    }

    private static String read(Path log) {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
