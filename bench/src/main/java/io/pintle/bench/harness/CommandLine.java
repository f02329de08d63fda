package io.pintle.bench.harness;

import java.io.IOException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * A harness's command line, read as {@code --option value} pairs plus the flags the harness names, failing with
 * the harness's usage line. The harness keeps its own {@code switch} over {@link #option()}, its defaults and its
 * checks:
 *
 * <pre>{@code
 * CommandLine line = new CommandLine(USAGE, args, "--keep");
 * while (line.next()) {
 *     switch (line.option()) {
 *         case "--keep" -> keep = true;
 *         case "--streams" -> streams = line.intValue(1, 128);
 *         default -> throw line.unknown();
 *     }
 * }
 * }</pre>
 */
public final class CommandLine {
    private final String usage;
    private final Iterator<String> words;
    private final Set<String> flags;
    private String option;
    private String value;

    /**
     * @param usage the message of every error about the command line's shape
     * @param args the command line
     * @param flags the options that take no value
     */
    public CommandLine(String usage, String[] args, String... flags) {
        this.usage = usage;
        this.words = Arrays.asList(args).iterator();
        this.flags = Set.of(flags);
    }

    /**
     * Reads the next option, and its value unless it is a flag.
     *
     * @return false at the end of the command line
     * @throws IllegalArgumentException with the usage when the last option has no value
     */
    public boolean next() {
        if (!words.hasNext()) {
            return false;
        }
        option = words.next();
        if (flags.contains(option)) {
            value = null;
            return true;
        }
        if (!words.hasNext()) {
            throw new IllegalArgumentException(usage);
        }
        value = words.next();
        return true;
    }

    /** @return the option {@link #next()} read */
    public String option() {
        return option;
    }

    /** @return its value (null for a flag) */
    public String value() {
        return value;
    }

    /** @return the error for an option the harness does not know: the usage */
    public IllegalArgumentException unknown() {
        return new IllegalArgumentException(usage);
    }

    /**
     * @return the value as an int ({@code _} and {@code ,} between digits allowed)
     * @throws NumberFormatException when it is not one
     * @throws IllegalArgumentException naming the range and the usage when it is outside [min, max]
     */
    public int intValue(int min, int max) {
        return bounded(value, min, max, usage);
    }

    /**
     * @return the value as a long ({@code _} and {@code ,} between digits allowed)
     * @throws NumberFormatException when it is not one
     * @throws IllegalArgumentException naming the range and the usage when it is outside [min, max]
     */
    public long longValue(long min, long max) {
        long parsed = Long.parseLong(withoutSeparators(value));
        checkRange(parsed, min, max, usage);
        return parsed;
    }

    /**
     * {@link #intValue} for a part of a value (a list item).
     *
     * @param text the number ({@code _} and {@code ,} allowed)
     * @param usage the harness's usage line, appended to the range error
     * @return the number
     */
    public static int bounded(String text, int min, int max, String usage) {
        int parsed = Integer.parseInt(withoutSeparators(text));
        checkRange(parsed, min, max, usage);
        return parsed;
    }

    /** The systemd unit's JVM options (deploy/systemd/pintle.service): every harness's default for the server. */
    public static final String UNIT_JVM_OPTIONS = "-Xms64m -Xmx384m -XX:MaxGCPauseMillis=20";

    /**
     * @param cpus a CPU list for taskset, or null
     * @return the command prefix that pins a process to them ({@code taskset -c CPUS}), or nothing for null
     */
    public static List<String> taskset(String cpus) {
        return cpus == null ? List.of() : List.of("taskset", "-c", cpus);
    }

    /**
     * @param value a CPU list for taskset, or "none" or blank
     * @return the CPU list, or null for "none" or blank
     */
    /**
     * Moves every thread of this JVM to {@code cpus} ({@code taskset -a -cp}); nothing when null.
     *
     * @param cpus a taskset CPU list, or null
     * @throws IOException if taskset fails
     */
    public static void pinThisJvm(String cpus) throws IOException, InterruptedException {
        if (cpus == null) {
            return;
        }
        Process taskset = new ProcessBuilder("taskset", "-a", "-cp", cpus,
                Long.toString(ProcessHandle.current().pid())).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!taskset.waitFor(10, java.util.concurrent.TimeUnit.SECONDS) || taskset.exitValue() != 0) {
            throw new IOException("taskset could not pin the harness to CPU " + cpus);
        }
    }

    public static String cpusOrNull(String value) {
        return value.isBlank() || value.equals("none") ? null : value;
    }

    /**
     * @param options JVM options, space-separated, as one argument
     * @return them one a word
     */
    public static List<String> jvmOptions(String options) {
        return options.isBlank() ? List.of() : List.of(options.strip().split("\\s+"));
    }

    private static String withoutSeparators(String text) {
        return text.replace("_", "").replace(",", "");
    }

    private static void checkRange(long value, long min, long max, String usage) {
        if (value < min || value > max) {
            throw new IllegalArgumentException("value " + value + " out of range [" + min + ", " + max + "]; "
                    + usage);
        }
    }
}
