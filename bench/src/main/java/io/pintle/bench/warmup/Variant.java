package io.pintle.bench.warmup;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A way of starting the server's JVM: which java, and which options on top of the systemd unit's. A variant with
 * an archive (an AppCDS archive, an AOT cache) gets it from a training run first.
 *
 * @param label the name on the command line and in files
 * @param title as the report prints it
 * @param java the java binary
 * @param options the options of every measured start, on top of the unit's
 * @param training the options of the training run that writes the archive, or empty when there is none
 * @param strict options that make the JVM refuse to start unless it can use the archive: a check after training
 *     (the measured starts use the lenient options, as the systemd unit would)
 * @param archive the archive the training writes, or null
 */
record Variant(String label, String title, String java, List<String> options, List<String> training,
        List<String> strict, Path archive) {
    Variant {
        options = List.copyOf(options);
        training = List.copyOf(training);
        strict = List.copyOf(strict);
    }

    /** The variant names {@link #of} knows. */
    static final List<String> NAMES = List.of("jdk17", "jdk17-appcds", "jdk25", "jdk25-aot", "jdk17-appcds-c1");

    boolean trained() {
        return archive != null;
    }

    /**
     * @param unitOptions the systemd unit's JVM options
     * @return the measured command's JVM options
     */
    List<String> jvmOptions(List<String> unitOptions) {
        List<String> all = new ArrayList<>(unitOptions);
        all.addAll(options);
        return all;
    }

    /**
     * @param name one of {@link #NAMES}
     * @param jdk17 JDK 17's java
     * @param jdk25 JDK 25's java
     * @param archives where archives and caches go
     * @return the variant
     */
    static Variant of(String name, String jdk17, String jdk25, Path archives) {
        Path jsa = archives.resolve("pintle-jdk17.jsa");
        Path aot = archives.resolve("pintle-jdk25.aot");
        return switch (name) {
            case "jdk17" -> new Variant(name, "JDK 17", jdk17, List.of(), List.of(), List.of(), null);
            // JDK 17 has no -XX:+AutoCreateSharedArchive (JDK 19): a dynamic archive is dumped at the exit of a
            // run with -XX:ArchiveClassesAtExit, then mapped with -XX:SharedArchiveFile. -Xshare:auto (the
            // default) starts without it when it is stale or missing.
            case "jdk17-appcds" -> new Variant(name, "JDK 17 + AppCDS", jdk17,
                    List.of("-XX:SharedArchiveFile=" + jsa, "-Xshare:auto"),
                    List.of("-XX:ArchiveClassesAtExit=" + jsa), List.of("-XX:SharedArchiveFile=" + jsa,
                            "-Xshare:on"), jsa);
            // The same archive, the JIT stopped at C1 (no profiling, no C2): compiles sooner, runs slower.
            case "jdk17-appcds-c1" -> new Variant(name, "JDK 17 + AppCDS, C1 only", jdk17,
                    List.of("-XX:SharedArchiveFile=" + jsa, "-Xshare:auto", "-XX:TieredStopAtLevel=1"),
                    List.of("-XX:ArchiveClassesAtExit=" + jsa), List.of("-XX:SharedArchiveFile=" + jsa,
                            "-Xshare:on"), jsa);
            case "jdk25" -> new Variant(name, "JDK 25", jdk25, List.of(), List.of(), List.of(), null);
            // JEP 483/514/515: the training run writes the cache at exit (loaded and linked classes, and method
            // profiles); -XX:AOTCache maps it (AOTMode=auto: started without it when it cannot be used).
            case "jdk25-aot" -> new Variant(name, "JDK 25 + AOT cache", jdk25, List.of("-XX:AOTCache=" + aot),
                    List.of("-XX:AOTCacheOutput=" + aot), List.of("-XX:AOTCache=" + aot, "-XX:AOTMode=on"), aot);
            default -> throw new IllegalArgumentException("no variant '" + name + "' " + NAMES);
        };
    }
}
