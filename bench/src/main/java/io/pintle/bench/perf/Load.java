package io.pintle.bench.perf;

import io.pintle.bench.sync.ProcessCpu;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.Connection;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpClientTransport;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The load generator: Jetty's {@link HttpClient} in this JVM (a process of its own, apart from every server),
 * presenting a node's certificate and pinning the server's key. Every response is checked: status, body length
 * and ETag; anything else is an error, counted by kind.
 */
public final class Load {
    /** A request that takes longer than this fails; only a stuck request gets near it. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
    /** The large file at a few MB/s still fits. */
    static final Duration DOWNLOAD_TIMEOUT = Duration.ofSeconds(120);
    private static final int MAX_THREADS = 32;
    /** What makes each failure's message unique: Jetty's object dumps ("Class@hash::…[…]") and hex ids. */
    private static final java.util.regex.Pattern OBJECT_DETAIL = java.util.regex.Pattern.compile(
            "[A-Za-z.$]*@[0-9a-f]+(::.*)?|\\[.*");

    private Load() {}

    /**
     * @param tls the node's context
     * @param http2 HTTP/2 (ALPN) or HTTP/1.1
     * @param resume whether the client offers sessions to resume (otherwise every connection is a full handshake)
     * @param maxConnections connections per server
     * @return a started client
     */
    public static HttpClient client(SSLContext tls, boolean http2, boolean resume, int maxConnections)
            throws Exception {
        ClientConnector connector = new ClientConnector();
        SslContextFactory.Client ssl = new SslContextFactory.Client();
        ssl.setSslContext(tls);
        // The server is authenticated by its key pin (in the context's trust manager), as Rudder agents do.
        ssl.setEndpointIdentificationAlgorithm(null);
        // Without host and port the JDK never offers a session to resume: a full handshake each time.
        ssl.setSessionCachingEnabled(resume);
        connector.setSslContextFactory(ssl);
        connector.setSelectors(2);
        QueuedThreadPool threads = new QueuedThreadPool(MAX_THREADS);
        threads.setName("perf-client");
        connector.setExecutor(threads);
        HttpClientTransport transport = http2 ? new HttpClientTransportOverHTTP2(new HTTP2Client(connector))
                : new HttpClientTransportOverHTTP(connector);
        HttpClient http = new HttpClient(transport);
        http.setMaxConnectionsPerDestination(maxConnections);
        http.setMaxRequestsQueuedPerDestination(100_000);
        http.setFollowRedirects(false);
        // Idle connections stay until the row closes them (the idle row holds them for tens of seconds).
        http.setIdleTimeout(Duration.ofMinutes(10).toMillis());
        // No Accept-Encoding: Rudder agents' curl does not ask for compression either.
        http.getContentDecoderFactories().clear();
        http.start();
        return http;
    }

    /**
     * What a response must be.
     *
     * @param status the status
     * @param length the body length
     * @param etag the ETag header, or null for any
     * @param version the HTTP version
     */
    record Expect(int status, long length, String etag, HttpVersion version) {}

    /** Completion of one exchange: null failure on success. */
    @FunctionalInterface
    interface Done {
        void done(String failure, long bytes);
    }

    /** One unit of work of a closed-loop user: a request, or a connection with a request. */
    @FunctionalInterface
    interface Exchange {
        void run(Done done);
    }

    /** A request on a kept-alive connection from the client's pool. */
    static Exchange keepAlive(HttpClient http, URI uri, Expect expect, Duration timeout) {
        return done -> send(http.newRequest(uri), expect, timeout, Request::send, done);
    }

    /** A new connection (a TLS handshake), one request on it, then close. */
    static Exchange newConnection(HttpClient http, URI uri, Expect expect) {
        Destination destination = http.resolveDestination(http.newRequest(uri));
        return done -> destination.newConnection().whenComplete((connection, failure) -> {
            if (failure != null) {
                done.done("connect: " + failure.getClass().getSimpleName() + ": " + failure.getMessage(), 0);
                return;
            }
            send(http.newRequest(uri), expect, REQUEST_TIMEOUT, connection::send, (error, bytes) -> {
                connection.close();
                done.done(error, bytes);
            });
        });
    }

    /** How a request is sent: by the client's pool or on a given connection. */
    @FunctionalInterface
    interface Sender {
        void send(Request request, Response.CompleteListener listener);
    }

    static void send(Request request, Expect expect, Duration timeout, Sender sender, Done done) {
        long[] bytes = new long[1];
        request.version(expect.version()).timeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .onResponseContent((response, content) -> bytes[0] += content.remaining());
        sender.send(request, result -> done.done(check(result, expect, bytes[0]), bytes[0]));
    }

    /** @return why the exchange failed, or null */
    static String check(Result result, Expect expect, long bytes) {
        if (result.isFailed()) {
            Throwable failure = result.getFailure();
            return failure.getClass().getSimpleName() + ": " + failure.getMessage();
        }
        Response response = result.getResponse();
        if (response.getStatus() != expect.status()) {
            return "status " + response.getStatus();
        }
        if (response.getVersion() != expect.version()) {
            return "version " + response.getVersion();
        }
        if (bytes != expect.length()) {
            return "body of " + bytes + " bytes instead of " + expect.length();
        }
        if (expect.etag() != null && !expect.etag().equals(response.getHeaders().get(HttpHeader.ETAG))) {
            return "ETag " + response.getHeaders().get(HttpHeader.ETAG) + " instead of " + expect.etag();
        }
        return null;
    }

    /**
     * CPU times at one instant, in milliseconds: the server's processes, this JVM (the load generator), the whole
     * machine.
     */
    record Cpu(double server, double serverJit, double serverGc, double client, double machine, long nanos) {
        static Cpu read(Collection<ProcessHandle> server) {
            double[] jvm = jvmThreadsMillis(server);
            return new Cpu(ProcessCpu.millis(server), jvm[0], jvm[1], ProcessCpu.selfAndChildrenMillis(),
                    ProcessCpu.machineBusyMillis(), System.nanoTime());
        }

        /** @return the CPU used from this reading to {@code later}, in cores (CPU seconds per second) */
        Usage until(Cpu later) {
            double wallMillis = (later.nanos - nanos) / 1e6;
            double server = (later.server - this.server) / wallMillis;
            double client = (later.client - this.client) / wallMillis;
            double machine = (later.machine - this.machine) / wallMillis;
            return new Usage(wallMillis / 1e3, server, (later.serverJit - serverJit) / wallMillis,
                    (later.serverGc - serverGc) / wallMillis, client, Math.max(0, machine - server - client));
        }
    }

    /**
     * CPU over a window, in cores.
     *
     * @param seconds the window
     * @param server the server's processes
     * @param serverJit of which a JVM server's JIT compiler threads (0 for nginx): high means not yet warm
     * @param serverGc of which a JVM server's garbage collector threads
     * @param client the load generator (this JVM)
     * @param others every other process on the machine
     */
    record Usage(double seconds, double server, double serverJit, double serverGc, double client, double others) {}

    /**
     * The JIT compiler threads' and the GC threads' CPU time, from {@code /proc/<pid>/task/<tid>/stat}, by thread
     * name (HotSpot's "C1 CompilerThre", "C2 CompilerThre"; "GC Thread#", "G1 …").
     *
     * @return {jit, gc} in milliseconds
     */
    public static double[] jvmThreadsMillis(Collection<ProcessHandle> processes) {
        double jit = 0;
        double gc = 0;
        for (ProcessHandle process : processes) {
            Path tasks = Path.of("/proc/" + process.pid() + "/task");
            try (java.util.stream.Stream<Path> list = Files.list(tasks)) {
                for (Path task : list.toList()) {
                    try {
                        String stat = Files.readString(task.resolve("stat"));
                        String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                        boolean isJit = name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler");
                        boolean isGc = name.startsWith("GC Thread") || name.startsWith("G1 ");
                        if (!isJit && !isGc) {
                            continue;
                        }
                        String[] rest = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        double millis = (Long.parseLong(rest[11]) + Long.parseLong(rest[12])) * 10.0;
                        if (isJit) {
                            jit += millis;
                        } else {
                            gc += millis;
                        }
                    } catch (java.io.IOException | RuntimeException threadGone) {
                        // A thread that ended since the listing: its time is lost either way.
                    }
                }
            } catch (java.io.IOException processGone) {
                // Nothing to add.
            }
        }
        return new double[] {jit, gc};
    }

    /**
     * A measured window.
     *
     * @param completed exchanges that succeeded and ended within the window
     * @param bytes their body bytes
     * @param seconds the window's length
     * @param errors failed exchanges over the whole run, warm-up included
     * @param errorKinds failures by description
     * @param latencies the completed exchanges' latencies, ascending, in nanoseconds
     * @param cpu CPU over the window
     */
    record Window(long completed, long bytes, double seconds, long errors, Map<String, Long> errorKinds,
            long[] latencies, Usage cpu) {
        double perSecond() {
            return completed / seconds;
        }

        double p50Millis() {
            return percentileMillis(latencies, 50);
        }

        double p99Millis() {
            return percentileMillis(latencies, 99);
        }
    }

    /** Counts errors by kind. */
    static final class Errors {
        private final LongAdder count = new LongAdder();
        private final Map<String, LongAdder> kinds = new ConcurrentHashMap<>();

        void add(String kind) {
            count.increment();
            // Messages carry object ids, ports and counts: keep the kinds few.
            String key = OBJECT_DETAIL.matcher(kind).replaceAll("");
            key = key.length() > 120 ? key.substring(0, 120) : key;
            kinds.computeIfAbsent(key, k -> new LongAdder()).increment();
        }

        long count() {
            return count.sum();
        }

        Map<String, Long> kinds() {
            Map<String, Long> map = new TreeMap<>();
            kinds.forEach((kind, n) -> map.put(kind, n.sum()));
            return map;
        }
    }

    /**
     * {@code concurrency} users, each starting its next exchange when the previous one ends, for a warm-up and then
     * a measured window; waits for the exchanges still in flight before returning.
     */
    static Window closedLoop(int concurrency, Duration warmup, Duration window, Exchange exchange,
            Collection<ProcessHandle> server, java.util.concurrent.Executor executor) throws InterruptedException {
        // A little grace for handing the users to the executor, on a busy machine.
        long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
        long windowStart = start + warmup.toNanos();
        long windowEnd = windowStart + window.toNanos();
        Errors errors = new Errors();
        LongAdder completed = new LongAdder();
        LongAdder bytes = new LongAdder();
        List<long[]> latencies = new ArrayList<>();
        AtomicLong[] sizes = new AtomicLong[concurrency];
        CountDownLatch finished = new CountDownLatch(concurrency);
        for (int i = 0; i < concurrency; i++) {
            long[] mine = new long[1 << 16];
            latencies.add(mine);
            sizes[i] = new AtomicLong();
            AtomicLong size = sizes[i];
            executor.execute(new Runnable() {
                @Override
                public void run() {
                    long begin = System.nanoTime();
                    if (begin - windowEnd >= 0) {
                        finished.countDown();
                        return;
                    }
                    exchange.run((failure, body) -> {
                        long end = System.nanoTime();
                        if (failure != null) {
                            errors.add(failure);
                        } else if (end - windowStart >= 0 && end - windowEnd < 0) {
                            completed.increment();
                            bytes.add(body);
                            int n = (int) size.getAndIncrement();
                            if (n < mine.length) {
                                mine[n] = end - begin;
                            }
                        }
                        // Through the executor: a failure can complete synchronously, inside run().
                        executor.execute(this);
                    });
                }
            });
        }
        long late = System.nanoTime() - windowStart;
        if (late > 0) {
            // The CPU readings then start late: say so rather than hide it.
            System.err.printf("warning: the users took %.0f ms longer to start than the warm-up%n", late / 1e6);
        }
        sleepUntil(windowStart);
        Cpu before = Cpu.read(server);
        sleepUntil(windowEnd);
        Cpu after = Cpu.read(server);
        if (!finished.await(REQUEST_TIMEOUT.toSeconds() + DOWNLOAD_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            errors.add("still in flight long after the window");
        }
        long[] all = new long[0];
        for (int i = 0; i < concurrency; i++) {
            int n = (int) Math.min(sizes[i].get(), latencies.get(i).length);
            int offset = all.length;
            all = Arrays.copyOf(all, offset + n);
            System.arraycopy(latencies.get(i), 0, all, offset, n);
        }
        Arrays.sort(all);
        return new Window(completed.sum(), bytes.sum(), window.toNanos() / 1e9, errors.count(), errors.kinds(), all,
                before.until(after));
    }

    /**
     * @param agents how many
     * @param completionSeconds from the first agent's start to the last one's end
     * @param errors failed agent updates (an update fails if either of its requests does)
     * @param errorKinds failures by description
     * @param latencies each successful agent update's time (connection, both requests), ascending, in nanoseconds
     * @param cpu CPU from the first start to the last end
     */
    record Herd(int agents, double completionSeconds, long errors, Map<String, Long> errorKinds, long[] latencies,
            Usage cpu) {}

    /**
     * A herd of agents, started at an even pace over {@code spread}: each opens its own connection (a full
     * handshake with its certificate), asks for the common library with its current ETag (304) and for its policies
     * with the previous generation's ETag (200 with the archive), as {@code rudder agent update} does right after
     * a new generation (curl {@code --etag-compare}), then closes.
     */
    static Herd herd(HttpClient http, URI common, Expect commonExpect, URI rules, Expect rulesExpect, int agents,
            Duration spread, Collection<ProcessHandle> server) throws InterruptedException {
        Destination destination = http.resolveDestination(http.newRequest(common));
        Errors errors = new Errors();
        long[] latencies = new long[agents];
        AtomicLong ok = new AtomicLong();
        AtomicLong lastEnd = new AtomicLong();
        CountDownLatch finished = new CountDownLatch(agents);
        ScheduledExecutorService pacer = Executors.newSingleThreadScheduledExecutor();
        Cpu before = Cpu.read(server);
        long start = System.nanoTime();
        try {
            for (int i = 0; i < agents; i++) {
                long offset = spread.toNanos() * i / agents;
                pacer.schedule(() -> agent(http, destination, common, commonExpect, rules, rulesExpect,
                        (failure, begin) -> {
                            long end = System.nanoTime();
                            lastEnd.accumulateAndGet(end, Math::max);
                            if (failure != null) {
                                errors.add(failure);
                            } else {
                                latencies[(int) ok.getAndIncrement()] = end - begin;
                            }
                            finished.countDown();
                        }), offset, TimeUnit.NANOSECONDS);
            }
            if (!finished.await(spread.toSeconds() + 2 * REQUEST_TIMEOUT.toSeconds() + 10, TimeUnit.SECONDS)) {
                errors.add("agent updates unfinished long after the herd");
            }
        } finally {
            pacer.shutdownNow();
        }
        Cpu after = Cpu.read(server);
        long[] done = Arrays.copyOf(latencies, (int) ok.get());
        Arrays.sort(done);
        long end = lastEnd.get() == 0 ? System.nanoTime() : lastEnd.get();
        return new Herd(agents, (end - start) / 1e9, errors.count(), errors.kinds(), done, before.until(after));
    }

    @FunctionalInterface
    private interface AgentDone {
        void done(String failure, long beginNanos);
    }

    private static void agent(HttpClient http, Destination destination, URI common, Expect commonExpect, URI rules,
            Expect rulesExpect, AgentDone done) {
        long begin = System.nanoTime();
        destination.newConnection().whenComplete((connection, failure) -> {
            if (failure != null) {
                done.done("connect: " + failure.getClass().getSimpleName() + ": " + failure.getMessage(), begin);
                return;
            }
            Request first = http.newRequest(common)
                    .headers(h -> h.put(HttpHeader.IF_NONE_MATCH, commonExpect.etag()));
            send(first, commonExpect, REQUEST_TIMEOUT, connection::send, (error, bytes) -> {
                if (error != null) {
                    connection.close();
                    done.done("common library: " + error, begin);
                    return;
                }
                Request second = http.newRequest(rules)
                        .headers(h -> h.put(HttpHeader.IF_NONE_MATCH, "\"previous-generation\""));
                send(second, rulesExpect, REQUEST_TIMEOUT, connection::send, (error2, bytes2) -> {
                    connection.close();
                    done.done(error2 == null ? null : "policies: " + error2, begin);
                });
            });
        });
    }

    /**
     * @param connections idle connections held
     * @param openSeconds time to open them all
     * @param rssBeforeBytes the server's resident memory before opening them
     * @param rssIdleBytes with them open and idle
     * @param before new-connection request latencies before opening them, ascending, in nanoseconds
     * @param during the same while they are open
     * @param checked idle connections asked one more request at the end
     * @param errors failures: opening, probes, the final check
     * @param errorKinds failures by description
     */
    record Idle(int connections, double openSeconds, long rssBeforeBytes, long rssIdleBytes, long[] before,
            long[] during, int checked, long errors, Map<String, Long> errorKinds) {}

    /**
     * Opens {@code count} connections, each with one request, and leaves them idle; measures the server's memory
     * and the latency of new connections with a request (sequential probes) before and while they are open; then
     * asks a sample of the idle connections for one more request, which checks that none was dropped.
     */
    static Idle idle(HttpClient idleClient, HttpClient probeClient, URI uri, Expect expect, int count, int probes,
            Collection<ProcessHandle> server) throws InterruptedException {
        Errors errors = new Errors();
        long rssBefore = rss(server);
        long[] before = probe(probeClient, uri, expect, probes, errors);
        Destination destination = idleClient.resolveDestination(idleClient.newRequest(uri));
        List<Connection> open = java.util.Collections.synchronizedList(new ArrayList<>());
        Semaphore inFlight = new Semaphore(64);
        CountDownLatch opened = new CountDownLatch(count);
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            inFlight.acquire();
            destination.newConnection().whenComplete((connection, failure) -> {
                if (failure != null) {
                    errors.add("open: " + failure.getClass().getSimpleName() + ": " + failure.getMessage());
                    inFlight.release();
                    opened.countDown();
                    return;
                }
                send(idleClient.newRequest(uri), expect, REQUEST_TIMEOUT, connection::send, (error, bytes) -> {
                    if (error != null) {
                        errors.add("open: " + error);
                        connection.close();
                    } else {
                        open.add(connection);
                    }
                    inFlight.release();
                    opened.countDown();
                });
            });
        }
        opened.await(5, TimeUnit.MINUTES);
        double openSeconds = (System.nanoTime() - start) / 1e9;
        // Let the server settle (buffers released, a young collection or two) before reading its memory.
        Thread.sleep(3000);
        long rssIdle = rss(server);
        long[] during = probe(probeClient, uri, expect, probes, errors);
        List<Connection> sample;
        synchronized (open) {
            int step = Math.max(1, open.size() / 500);
            sample = new ArrayList<>();
            for (int i = 0; i < open.size(); i += step) {
                sample.add(open.get(i));
            }
        }
        CountDownLatch checkedLatch = new CountDownLatch(sample.size());
        for (Connection connection : sample) {
            inFlight.acquire();
            send(idleClient.newRequest(uri), expect, REQUEST_TIMEOUT, connection::send, (error, bytes) -> {
                if (error != null) {
                    errors.add("idle connection, later request: " + error);
                }
                inFlight.release();
                checkedLatch.countDown();
            });
        }
        checkedLatch.await(2, TimeUnit.MINUTES);
        int held = open.size();
        synchronized (open) {
            open.forEach(Connection::close);
        }
        return new Idle(held, openSeconds, rssBefore, rssIdle, before, during, sample.size(), errors.count(),
                errors.kinds());
    }

    private static long[] probe(HttpClient http, URI uri, Expect expect, int probes, Errors errors)
            throws InterruptedException {
        Exchange exchange = newConnection(http, uri, expect);
        long[] latencies = new long[probes];
        int ok = 0;
        for (int i = 0; i < probes; i++) {
            CountDownLatch done = new CountDownLatch(1);
            String[] failure = new String[1];
            long begin = System.nanoTime();
            exchange.run((error, bytes) -> {
                failure[0] = error;
                done.countDown();
            });
            if (!done.await(REQUEST_TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS)) {
                failure[0] = "probe did not finish";
            }
            if (failure[0] != null) {
                errors.add("probe: " + failure[0]);
            } else {
                latencies[ok++] = System.nanoTime() - begin;
            }
            Thread.sleep(20);
        }
        long[] sorted = Arrays.copyOf(latencies, ok);
        Arrays.sort(sorted);
        return sorted;
    }

    /** @return the processes' resident memory (VmRSS) together, in bytes */
    static long rss(Collection<ProcessHandle> processes) {
        long total = 0;
        for (ProcessHandle process : processes) {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
                    if (line.startsWith("VmRSS:")) {
                        total += Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                    }
                }
            } catch (java.io.IOException | RuntimeException e) {
                // Gone: counts as nothing.
            }
        }
        return total;
    }

    static double percentileMillis(long[] sorted, double percentile) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(percentile / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)] / 1e6;
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long remaining = nanoTime - System.nanoTime();
        if (remaining > 0) {
            TimeUnit.NANOSECONDS.sleep(remaining);
        }
    }
}
