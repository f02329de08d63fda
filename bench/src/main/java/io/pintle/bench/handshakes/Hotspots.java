package io.pintle.bench.handshakes;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a server's CPU went in a JFR recording: the share of Java stack samples inside the frames that matter
 * here (inclusive), and the methods most often on top of the stack (self), overall and within the chain
 * verification.
 *
 * @param window the load during the recording
 * @param samples Java execution samples
 * @param verifySamples Java execution samples inside {@code CaTrust.verify}
 * @param inclusive share of samples with the named frame anywhere on the stack, by name
 * @param topSelf the most frequent top frames, share of all samples
 * @param topInVerify the most frequent top frames among the samples inside {@code CaTrust.verify}, share of those
 */
record Hotspots(Window window, int samples, int verifySamples, Map<String, Double> inclusive, Map<String, Double> topSelf,
        Map<String, Double> topInVerify) {
    static final String VERIFY = "io.pintle.server.nodes.CaTrust.verify";
    /** The frames whose inclusive share is reported: Pintle's trust decision, the JDK's PKIX work, the TLS engine's
     * Java side and the file answer. */
    private static final List<String> WATCHED = List.of(
            VERIFY,
            "java.security.cert.CertPathBuilder.build",
            "io.pintle.server.nodes.ClientCertificate.of",
            "io.pintle.server.nodes.NodeTrust.identify",
            "org.conscrypt.ConscryptEngine.unwrap",
            "org.conscrypt.ConscryptEngine.wrap",
            "io.pintle.server.http.files.FileHandler.handle");
    private static final int TOP = 12;
    /** jdk.ExecutionSample's period in the JDK's {@code profile} settings. */
    static final double PERIOD_MILLIS = 10;

    static Hotspots read(Path recording, Window window) throws IOException {
        int samples = 0;
        int inVerify = 0;
        Map<String, Integer> inclusive = new LinkedHashMap<>();
        WATCHED.forEach(name -> inclusive.put(name, 0));
        Map<String, Integer> self = new HashMap<>();
        Map<String, Integer> verifySelf = new HashMap<>();
        for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
            String type = event.getEventType().getName();
            if (!type.equals("jdk.ExecutionSample")) {
                continue;
            }
            RecordedStackTrace stack = event.getStackTrace();
            if (stack == null || stack.getFrames().isEmpty()) {
                continue;
            }
            samples++;
            List<RecordedFrame> frames = stack.getFrames();
            String top = name(frames.get(0));
            self.merge(top, 1, Integer::sum);
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (RecordedFrame frame : frames) {
                seen.add(name(frame));
            }
            for (String name : WATCHED) {
                if (seen.contains(name)) {
                    inclusive.merge(name, 1, Integer::sum);
                }
            }
            if (seen.contains(VERIFY)) {
                inVerify++;
                verifySelf.merge(top, 1, Integer::sum);
            }
        }
        int all = Math.max(1, samples);
        int verifying = Math.max(1, inVerify);
        Map<String, Double> inclusiveShare = new LinkedHashMap<>();
        inclusive.forEach((name, count) -> inclusiveShare.put(name, count / (double) all));
        return new Hotspots(window, samples, inVerify, inclusiveShare, top(self, all), top(verifySelf, verifying));
    }

    /**
     * @return CPU milliseconds per handshake inside {@code CaTrust.verify}, estimated from the samples: a Java
     *     stack sample every {@link #PERIOD_MILLIS} of a running thread's time
     */
    double verifyMillisPerHandshake() {
        return verifySamples * PERIOD_MILLIS / Math.max(1, window.connections());
    }

    private static Map<String, Double> top(Map<String, Integer> counts, int total) {
        return counts.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(TOP)
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue() / (double) total, (a, b) -> a,
                        LinkedHashMap::new));
    }

    private static String name(RecordedFrame frame) {
        return frame.getMethod().getType().getName() + "." + frame.getMethod().getName();
    }
}
