package io.pintle.bench;

import io.pintle.server.config.ConfigLoader;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.CertificateBinding;
import io.pintle.server.nodes.CertificateIndex;
import io.pintle.server.nodes.CertificatesLoader;
import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeRegistry;
import io.pintle.server.nodes.NodesList;
import io.pintle.server.nodes.NodesListLoader;
import io.pintle.server.reload.InputFile;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotLoader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.ref.Reference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What building a snapshot of the large registry costs, without a server: {@link SnapshotLoader} from scratch
 * (what start-up does), from the previous snapshot after one node was added to both files (what a reload does),
 * the same warm reload taken apart step by step with the loaders' public parts, and the heap one snapshot retains.
 */
final class SnapshotCosts {
    /** Unmeasured cold loads first, so that the measured ones run compiled code. */
    static final int JIT_WARMUP_LOADS = 3;
    /** Rounds of the heap measurement; the median is reported. */
    static final int HEAP_ROUNDS = 3;
    /** Full collections before reading the heap: one more than strictly needed, for what finalizers release. */
    private static final int GCS_PER_READING = 2;
    /** Pause after the collections, so that the heap figures settle. */
    private static final long GC_SETTLE_MILLIS = 50;
    /** Label of the configuration step: the reloader's work, not {@link SnapshotLoader}'s. */
    private static final String CONFIGURATION_STEP =
            "Read and validate `pintle.toml` (the reloader does it before the snapshot)";
    /** Label of the detail step: the JSON tree alone, which {@link NodesListLoader} builds first. */
    private static final String FULL_PARSE_STEP = "for comparison: parse the whole file, nothing reused";
    /** A warning while parsing the generated bundle means the benchmark's data is wrong: fail. */
    private static final Consumer<String> NO_WARNINGS = warning -> {
        throw new IllegalStateException("unexpected warning: " + warning);
    };

    private final LargeRegistry registry;
    private final ServerConfig config;
    private final Clock clock = Clock.systemUTC();
    private final PrintStream progress;
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    /** Parses as {@link NodesListLoader} does (a default mapper), for the detail step. */

    private SnapshotCosts(LargeRegistry registry, ServerConfig config, PrintStream progress) {
        this.registry = registry;
        this.config = config;
        this.progress = progress;
    }

    /**
     * Measures cold and warm snapshot builds, their breakdown and the retained heap. Adds
     * {@code repetitions + HEAP_ROUNDS} nodes to the registry on the way.
     *
     * @param registry the registry, whose configuration names the input files
     * @param repetitions measured repetitions of each build
     * @param progress where to report progress
     * @return the figures
     * @throws Exception if a snapshot cannot be built or the files written
     */
    static Figures measure(LargeRegistry registry, int repetitions, PrintStream progress) throws Exception {
        ServerConfig config = ConfigLoader.load(registry.layout().config());
        return new SnapshotCosts(registry, config, progress).measure(repetitions);
    }

    /**
     * @param nodes nodes in the registry when the cold builds ran
     * @param inputBytes total size of the input files then
     * @param inputFiles number of input files
     * @param cold {@code load(1)}: a snapshot from scratch
     * @param warm {@code load(n, previous)} after one node was added to both files
     * @param warmCpu CPU time of the thread running each warm build
     * @param warmGc collectors' time during each warm build
     * @param warmCpuShare how busy the JVM and the machine were during the warm builds and their breakdown
     * @param steps the warm build taken apart, in order, plus the configuration read a reload also does
     * @param coldCertificates parsing the certificate bundle without reuse, for comparison
     * @param retainedOne heap retained by one snapshot built from scratch, bytes
     * @param retainedDuringReload heap retained by the previous and the new snapshot together, as during a reload
     */
    record Figures(int nodes, long inputBytes, int inputFiles, Summary cold, Summary warm, Summary warmCpu,
            Summary warmGc, CpuShare warmCpuShare, List<Step> steps, Summary coldCertificates, long retainedOne,
            long retainedDuringReload) {}

    /** Where a step of the breakdown belongs. */
    enum Part {
        /** A step of {@link SnapshotLoader#load(long, ServerSnapshot)}; these add up to the warm build. */
        LOADER,
        /** Part of the step above it, shown for detail. */
        DETAIL,
        /** Work the reloader does besides the snapshot. */
        RELOADER
    }

    /**
     * One step of a warm build.
     *
     * @param label what it does
     * @param time its durations
     * @param part where it belongs
     */
    record Step(String label, Summary time, Part part) {}

    private Figures measure(int repetitions) throws Exception {
        int nodes = registry.nodeCount();
        List<Path> inputs = SnapshotLoader.inputFiles(config);
        long inputBytes = 0;
        for (Path input : inputs) {
            inputBytes += Files.size(input);
        }
        progress.printf(Locale.ROOT, "Snapshot builds: %,d nodes, %d input files, %.1f MB%n", nodes, inputs.size(),
                inputBytes / 1e6);
        for (int i = 0; i < JIT_WARMUP_LOADS; i++) {
            new SnapshotLoader(config, clock).load(1);
        }

        long[] cold = new long[repetitions];
        ServerSnapshot previous = null;
        for (int i = 0; i < repetitions; i++) {
            long start = System.nanoTime();
            previous = new SnapshotLoader(config, clock).load(1);
            cold[i] = System.nanoTime() - start;
        }
        long[] coldCertificates = new long[Math.max(3, repetitions / 4)];
        byte[] bundle = Files.readAllBytes(registry.certificateBundle());
        for (int i = 0; i < coldCertificates.length; i++) {
            long start = System.nanoTime();
            CertificatesLoader.parse(bundle, registry.certificateBundle(), NO_WARNINGS, CertificateIndex.EMPTY);
            coldCertificates[i] = System.nanoTime() - start;
        }
        progress.printf("  cold: %s%n", Summary.of(cold).medianAndP99());

        long[] warm = new long[repetitions];
        long[] warmCpu = new long[repetitions];
        long[] warmGc = new long[repetitions];
        Map<String, long[]> steps = new LinkedHashMap<>();
        CpuSampler cpu = new CpuSampler();
        CpuSampler.Sample before = cpu.sample();
        for (int i = 0; i < repetitions; i++) {
            registry.publish(registry.addNode());
            long gc = GcTime.millis();
            long cpuStart = threads.getCurrentThreadCpuTime();
            long start = System.nanoTime();
            ServerSnapshot next = new SnapshotLoader(config, clock).load(previous.generation() + 1, previous);
            warm[i] = System.nanoTime() - start;
            warmCpu[i] = threads.getCurrentThreadCpuTime() - cpuStart;
            warmGc[i] = TimeUnit.MILLISECONDS.toNanos(GcTime.millis() - gc);
            if (next.nodes().nodeCount() != registry.nodeCount()) {
                throw new IllegalStateException("snapshot has " + next.nodes().nodeCount() + " nodes, the files "
                        + registry.nodeCount());
            }
            breakDown(inputs, previous, i, repetitions, steps);
            previous = next;
        }
        CpuShare warmCpuShare = CpuSampler.between(before, cpu.sample());
        progress.printf("  warm (one node added): %s%n", Summary.of(warm).medianAndP99());
        List<Step> breakdown = new ArrayList<>();
        steps.forEach((label, times) -> breakdown.add(new Step(label, Summary.of(times), part(label))));
        Reference.reachabilityFence(previous);
        previous = null;

        long[][] heap = retainedHeap();
        return new Figures(nodes, inputBytes, inputs.size(), Summary.of(cold), Summary.of(warm), Summary.of(warmCpu),
                Summary.of(warmGc), warmCpuShare, breakdown, Summary.of(coldCertificates), median(heap[0]),
                median(heap[1]));
    }

    private static Part part(String label) {
        if (label.equals(CONFIGURATION_STEP)) {
            return Part.RELOADER;
        }
        return label.equals(FULL_PARSE_STEP) ? Part.DETAIL : Part.LOADER;
    }

    /**
     * Repeats the work of the warm build just measured, step by step, on the same files and the same previous
     * snapshot, with the loaders {@link SnapshotLoader} calls; the order and the reuse are those of
     * {@link SnapshotLoader#load(long, ServerSnapshot)}.
     */
    private void breakDown(List<Path> inputs, ServerSnapshot previous, int repetition, int repetitions,
            Map<String, long[]> steps) throws Exception {
        Path list = config.nodes().list();
        Path bundle = registry.certificateBundle();

        long start = System.nanoTime();
        Map<Path, byte[]> contents = new LinkedHashMap<>();
        for (Path input : inputs) {
            contents.put(input, InputFile.read(input));
        }
        record(steps, "Read every input file", repetition, repetitions, start);

        start = System.nanoTime();
        for (Map.Entry<Path, byte[]> content : contents.entrySet()) {
            InputFile.of(content.getValue()).sameContent(previous.inputs().get(content.getKey()));
        }
        record(steps, "Compare every input with the previous snapshot's bytes (change detection)", repetition,
                repetitions, start);

        start = System.nanoTime();
        NodesList nodes = NodesListLoader.parse(contents.get(list), list, previous.nodesList());
        record(steps, "Parse `nodeslist.json` reusing unchanged entries (byte comparison, 1 new entry)", repetition,
                repetitions, start);

        start = System.nanoTime();
        NodesListLoader.parse(contents.get(list), list);
        record(steps, FULL_PARSE_STEP, repetition, repetitions, start);

        start = System.nanoTime();
        CertificateIndex before = previous.certificates().get(bundle);
        CertificateIndex index = CertificatesLoader.parse(contents.get(bundle), bundle, NO_WARNINGS, before);
        record(steps, "Parse `nodescerts.pem` reusing unchanged blocks (byte comparison, 1 new certificate)",
                repetition, repetitions, start);

        start = System.nanoTime();
        List<CertificateBinding> bindings = index.bindings();
        NodeRegistry.of(nodes.nodes(), bindings);
        record(steps, "Build the node registry (maps by node id and by pinned key)", repetition, repetitions, start);

        start = System.nanoTime();
        ConfigLoader.load(config.source());
        record(steps, CONFIGURATION_STEP, repetition, repetitions, start);
    }

    private static void record(Map<String, long[]> steps, String label, int repetition, int repetitions,
            long start) {
        steps.computeIfAbsent(label, k -> new long[repetitions])[repetition] = System.nanoTime() - start;
    }

    /**
     * Heap retained by snapshots: used heap after full collections with the snapshots held, minus the same without
     * them. Each round builds one snapshot from scratch, reads the heap, then builds the next one from it after one
     * node was added (as a reload does, both alive until the old one is released) and reads the heap again.
     *
     * @return bytes retained by one snapshot, and by a snapshot and its successor together, one entry per round
     */
    private long[][] retainedHeap() throws Exception {
        long[] one = new long[HEAP_ROUNDS];
        long[] both = new long[HEAP_ROUNDS];
        for (int round = 0; round < HEAP_ROUNDS; round++) {
            long base = usedHeapAfterGc();
            ServerSnapshot first = new SnapshotLoader(config, clock).load(1);
            long withFirst = usedHeapAfterGc();
            registry.publish(registry.addNode());
            ServerSnapshot second = new SnapshotLoader(config, clock).load(2, first);
            long withBoth = usedHeapAfterGc();
            one[round] = withFirst - base;
            both[round] = withBoth - base;
            // Keeps both alive until the readings above: the JIT may otherwise consider them dead earlier.
            Reference.reachabilityFence(first);
            Reference.reachabilityFence(second);
        }
        progress.printf("  retained heap: one snapshot %s, previous and new together %s (MB, each round)%n",
                megabytes(one), megabytes(both));
        return new long[][] {one, both};
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < GCS_PER_READING; i++) {
            System.gc();
        }
        TimeUnit.MILLISECONDS.sleep(GC_SETTLE_MILLIS);
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static String megabytes(long[] bytes) {
        return Arrays.toString(Arrays.stream(bytes)
                .mapToObj(b -> String.format(Locale.ROOT, "%.1f", b / 1e6)).toArray());
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
