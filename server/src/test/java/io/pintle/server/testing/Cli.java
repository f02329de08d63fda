package io.pintle.server.testing;

import io.pintle.server.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs the {@code pintle} command line in this JVM, capturing what it prints. */
public final class Cli {
    private Cli() {}

    /**
     * The outcome of one invocation.
     *
     * @param exitCode what {@code Main.run} returned
     * @param out what it printed on standard output
     * @param err what it printed on standard error
     */
    public record Run(int exitCode, String out, String err) {}

    /**
     * Runs {@code pintle args...}. Standard output and error are the JVM's, so invocations are serialised; a
     * server running in the same JVM may print on them meanwhile (its log lines are then captured too).
     *
     * @param args the arguments
     * @return the outcome
     */
    public static synchronized Run pintle(String... args) {
        PrintStream originalOut = System.out;
        PrintStream originalErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exitCode;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            exitCode = Main.run(args);
        } finally {
            System.out.flush();
            System.err.flush();
            System.setOut(originalOut);
            System.setErr(originalErr);
        }
        return new Run(exitCode, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
