package io.pintle.bench.treescan;

import io.pintle.server.policy.DigestCache;
import io.pintle.server.policy.TreeScanner;
import io.pintle.server.policy.TreeVersion;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * One JVM of {@code bench/treescan}, started with the server jar under test first on its class path: the share's
 * whole-tree scan (a change wait's look) and each node's scan and replay (an {@code ?only=} archive's two walks),
 * in the calling thread's CPU time, after as many warm-up passes as measured ones. Prints one line, {@code RESULT
 * <whole µs per node> <per-node µs per node>}: the medians of its passes.
 */
public final class TreeScanChild {
    private TreeScanChild() {}

    public static void main(String[] args) throws Exception {
        Path share = Path.of(args[0]).toRealPath();
        int passes = Integer.parseInt(args[1]);
        ExecutorService workers = Executors.newFixedThreadPool(2);
        try (DigestCache digests = new DigestCache(1_000_000, 1, workers)) {
            TreeScanner scanner = new TreeScanner(digests, 1_000_000);
            List<Path> nodes = new ArrayList<>();
            try (DirectoryStream<Path> children = Files.newDirectoryStream(share)) {
                children.forEach(nodes::add);
            }
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            double[] whole = new double[passes];
            double[] perNode = new double[passes];
            for (int pass = -passes; pass < passes; pass++) {
                long start = threads.getCurrentThreadCpuTime();
                scanner.scan(share, true);
                long scanned = threads.getCurrentThreadCpuTime();
                for (Path node : nodes) {
                    TreeVersion version = scanner.scan(node, false);
                    scanner.replay(version, (entry, stat) -> { });
                }
                long replayed = threads.getCurrentThreadCpuTime();
                if (pass >= 0) {
                    whole[pass] = (scanned - start) / 1e3 / nodes.size();
                    perNode[pass] = (replayed - scanned) / 1e3 / nodes.size();
                }
            }
            System.out.printf(Locale.ROOT, "RESULT %.3f %.3f%n", median(whole), median(perNode));
        } finally {
            workers.shutdownNow();
        }
    }

    /** @return the median of {@code values} (of an even count, the mean of the middle two) */
    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }
}
