package io.pintle.bench.hostile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * After the last attack: the victim alone again while the server's gauges settle, then a garbage collection
 * forced with {@code jcmd <pid> GC.run}, to tell what is still held from what only waits for a collection (with
 * Conscrypt, each closed TLS connection's pipe descriptors go with its engine's collection).
 *
 * @param victim the victim's downloads during the settling time
 * @param seconds how long the settling lasted: until every gauge was back at its reading before the first attack,
 *     or the bound
 * @param beforeAttacks the gauges just before the first attack
 * @param settled the gauges at the end of the settling time
 * @param afterGc the gauges a few seconds after the forced collection, or null when it could not be forced
 * @param gc how the collection went ("forced", or why not)
 */
record EndOfRun(Victim.Window victim, double seconds, GaugeSampler.Sample beforeAttacks, GaugeSampler.Sample settled,
        GaugeSampler.Sample afterGc, String gc) {
    /** How long the gauges get to settle after the forced collection (a few readings). */
    private static final long AFTER_GC_MILLIS = 3_000;

    /**
     * A forced collection.
     *
     * @param after the gauges a few seconds after it, or null when it could not be forced
     * @param how "forced", or why not
     */
    record Gc(GaugeSampler.Sample after, String how) {}

    /**
     * Forces a collection in the server and reads the gauges after it.
     *
     * @return the reading after, and how it went
     */
    static Gc forceGc(long pid, GaugeSampler gauges) throws InterruptedException {
        Path java = Path.of(ProcessHandle.current().info().command().orElse("java"));
        Path jcmd = java.getParent() != null ? java.getParent().resolve("jcmd") : Path.of("jcmd");
        List<String> command = new ArrayList<>(List.of(Files.isExecutable(jcmd) ? jcmd.toString() : "jcmd",
                Long.toString(pid), "GC.run"));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return new Gc(null, "jcmd GC.run did not end within 30 s");
            }
            if (process.exitValue() != 0) {
                return new Gc(null, "jcmd GC.run exited with " + process.exitValue());
            }
        } catch (IOException e) {
            return new Gc(null, "no jcmd: " + e.getMessage());
        }
        Thread.sleep(AFTER_GC_MILLIS);
        return new Gc(gauges.latest(), "forced with `jcmd <pid> GC.run`");
    }
}
