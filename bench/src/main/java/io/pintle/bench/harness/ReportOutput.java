package io.pintle.bench.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a harness's results go: the Markdown report on standard output (which the one-command scripts keep for
 * the report only; progress goes to standard error), and to the files the command line names.
 */
public final class ReportOutput {
    private ReportOutput() {}

    /** Draws a plot into a file. */
    public interface Plot {
        /**
         * @param file the PNG to write
         * @throws IOException if it cannot be written
         */
        void write(Path file) throws IOException;
    }

    /**
     * Prints the report on standard output, in UTF-8, and writes it to {@code output} when there is one.
     *
     * @param markdown the report
     * @param output the file for it, or null
     * @param progress where "written to" is said
     * @throws IOException if the file cannot be written
     */
    public static void publish(String markdown, Path output, PrintStream progress) throws IOException {
        PrintStream stdout = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        stdout.print(markdown);
        stdout.flush();
        if (output != null) {
            Files.createDirectories(output.toAbsolutePath().getParent());
            Files.writeString(output, markdown);
            progress.println("written to " + output);
        }
    }

    /**
     * Writes the plot when a file is named for it.
     *
     * @param file the PNG, or null
     * @param plot draws it
     * @param progress where "plot written to" is said
     * @throws IOException if it cannot be written
     */
    public static void plot(Path file, Plot plot, PrintStream progress) throws IOException {
        if (file != null) {
            Files.createDirectories(file.toAbsolutePath().getParent());
            plot.write(file);
            progress.println("plot written to " + file);
        }
    }
}
