package io.pintle.bench.channels;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The load generator: one node per TLS connection, each with its own client certificate, all driven by one thread
 * over one NIO selector with raw {@link SSLEngine}s (an HTTP client per identity would cost a selector thread
 * each). Each node does what a pull client does: {@code GET .../remote-run/orders?wait=300} over HTTP/1.1 and
 * keep-alive; a 204 (the wait ran out) polls again; an order line is answered at once with {@code PUT
 * .../orders/<order>} (one output line, an empty line, {@code <order> exit 0}), then it polls again. Any other
 * answer (a 503 while the server is busy) is retried after {@link #RETRY_NANOS}.
 *
 * <p>Each node connects from its own loopback address (127.1.x.y), as nodes come from their own hosts: the server's
 * per-address shares then apply per node, and the ephemeral ports of one address are not the limit.
 */
public final class PullClients implements AutoCloseable {
    /** Receives every order line a node gets, on the generator's thread. */
    public interface Listener {
        /**
         * @param node the node's index
         * @param command the order's command ({@code run}, {@code update}, ...)
         * @param nanos {@link System#nanoTime()} when the line was read
         */
        void order(int node, String command, long nanos);

        /** @param node its report was answered 204, at {@code nanos} */
        void reported(int node, long nanos);
    }

    static final long RETRY_NANOS = 1_000_000_000L;
    private static final String POLL_PATH = "/rudder/relay-api/remote-run/orders";
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final PullNodes identities;
    private final SSLContext context;
    private final Map<SSLEngine, Integer> engineNodes = new ConcurrentHashMap<>();
    private final Listener listener;
    private final Selector selector;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final PriorityQueue<long[]> retries = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
    private final Conn[] conns;
    private final Thread thread;
    private final ByteBuffer appIn;
    private final boolean contentType;
    private volatile boolean stopping;

    private int toOpen;
    private int nextToOpen;
    private int maxHandshaking;
    private int handshaking;

    final AtomicInteger connected = new AtomicInteger();
    final AtomicInteger parked = new AtomicInteger();
    final AtomicInteger closedByServer = new AtomicInteger();
    final AtomicInteger failures = new AtomicInteger();
    final AtomicLong pollsAnswered204 = new AtomicLong();
    final AtomicLong orders = new AtomicLong();
    final AtomicLong reports = new AtomicLong();
    final AtomicLong retried = new AtomicLong();
    final AtomicLong unexpected = new AtomicLong();
    volatile String lastFailure;

    PullClients(NodeIdentities identities, X509Certificate serverCertificate, int port, boolean contentType,
            Listener listener) throws IOException, GeneralSecurityException {
        this(identities.on(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)), List.of(serverCertificate),
                contentType, listener);
    }

    /**
     * @param identities the nodes, each with its own policy server
     * @param servers the servers' certificates: a server presenting another key is refused (agents pin it)
     * @param contentType whether reports carry {@code Content-Type: text/plain}
     * @param listener told of every order and answered report
     */
    public PullClients(PullNodes identities, Collection<X509Certificate> servers, boolean contentType,
            Listener listener) throws IOException, GeneralSecurityException {
        this.identities = identities;
        this.contentType = contentType;
        this.listener = listener;
        this.context = SSLContext.getInstance("TLSv1.3");
        context.init(new javax.net.ssl.KeyManager[] {new PerEngineKeys()},
                new javax.net.ssl.TrustManager[] {new PinnedServer(servers)}, null);
        // Engines are made without host and port: no session is ever resumed, under another node's identity.
        context.getClientSessionContext().setSessionCacheSize(1);
        this.selector = Selector.open();
        this.conns = new Conn[identities.count()];
        this.appIn = ByteBuffer.allocate(context.createSSLEngine().getSession().getApplicationBufferSize() + 1024);
        this.thread = new Thread(this::loop, "bench-pull-clients");
        thread.setDaemon(true);
    }

    /** Starts the generator's thread. */
    public void start() {
        thread.start();
    }

    /** @return the generator thread's id, for its CPU time */
    long threadId() {
        return thread.getId();
    }

    /**
     * Opens the nodes' channels, at most {@code inFlight} handshakes at a time.
     *
     * @param count nodes (the first {@code count} identities)
     * @param inFlight handshakes at once
     */
    public void open(int count, int inFlight) {
        commands.add(() -> {
            toOpen = count;
            maxHandshaking = inFlight;
            openMore();
        });
        selector.wakeup();
    }

    private void openMore() {
        while (handshaking < maxHandshaking && nextToOpen < toOpen) {
            int node = nextToOpen++;
            try {
                connect(node);
            } catch (IOException e) {
                failed(null, "connect node " + node + ": " + e);
            }
        }
    }

    private void connect(int node) throws IOException {
        SocketChannel channel = SocketChannel.open();
        channel.configureBlocking(false);
        Socket socket = channel.socket();
        socket.setTcpNoDelay(true);
        socket.bind(new InetSocketAddress(identities.source(node), 0));
        SSLEngine engine = context.createSSLEngine();
        engine.setUseClientMode(true);
        engine.setEnabledProtocols(new String[] {"TLSv1.3"});
        engineNodes.put(engine, node);
        Conn conn = new Conn(node, channel, engine);
        conns[node] = conn;
        handshaking++;
        if (channel.connect(identities.server(node))) {
            channel.register(selector, SelectionKey.OP_READ, conn);
            engine.beginHandshake();
            pump(conn);
        } else {
            channel.register(selector, SelectionKey.OP_CONNECT, conn);
        }
    }

    private String host(int node) {
        InetSocketAddress server = identities.server(node);
        return server.getAddress().getHostAddress() + ":" + server.getPort();
    }

    /** @return channels parked at their server now */
    public int parked() {
        return parked.get();
    }

    /** @return connections that failed so far, and the last reason */
    public String failuresSoFar() {
        return failures.get() + (lastFailure == null ? "" : " (last: " + lastFailure + ")");
    }

    private void loop() {
        try {
            while (!stopping) {
                long now = System.nanoTime();
                long wait = 200;
                while (!retries.isEmpty() && retries.peek()[0] <= now) {
                    Conn conn = conns[(int) retries.poll()[1]];
                    if (conn != null && conn.open) {
                        conn.retry.run();
                        try {
                            pump(conn);
                        } catch (IOException | RuntimeException e) {
                            failed(conn, e.toString());
                        }
                    }
                }
                if (!retries.isEmpty()) {
                    wait = Math.max(1, Math.min(wait, (retries.peek()[0] - now) / 1_000_000));
                }
                selector.select(wait);
                Runnable command;
                while ((command = commands.poll()) != null) {
                    command.run();
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    Conn conn = (Conn) key.attachment();
                    try {
                        if (key.isValid() && key.isConnectable()) {
                            conn.channel.finishConnect();
                            key.interestOps(SelectionKey.OP_READ);
                            conn.engine.beginHandshake();
                        }
                        if (key.isValid() && key.isReadable()) {
                            int read = conn.channel.read(conn.netIn);
                            if (read < 0) {
                                closedByServer.incrementAndGet();
                                close(conn, "closed by the server");
                                continue;
                            }
                        }
                        pump(conn);
                    } catch (IOException | RuntimeException e) {
                        failed(conn, e.toString());
                    }
                }
                selector.selectedKeys().clear();
                openMore();
            }
        } catch (IOException e) {
            lastFailure = "selector: " + e;
        }
    }

    /** Moves bytes until the connection waits for the network. */
    private void pump(Conn conn) throws IOException {
        while (conn.open) {
            if (conn.netOut.position() > 0) {
                conn.netOut.flip();
                conn.channel.write(conn.netOut);
                conn.netOut.compact();
                if (conn.netOut.position() > 0) {
                    conn.channel.keyFor(selector).interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                    return;
                }
                conn.channel.keyFor(selector).interestOps(SelectionKey.OP_READ);
            }
            SSLEngineResult.HandshakeStatus status = conn.engine.getHandshakeStatus();
            switch (status) {
                case NEED_TASK -> {
                    Runnable task;
                    while ((task = conn.engine.getDelegatedTask()) != null) {
                        task.run();
                    }
                }
                case NEED_WRAP -> wrap(conn, EMPTY);
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                    if (!unwrap(conn)) {
                        return;
                    }
                }
                default -> {
                    if (!conn.handshaken) {
                        conn.handshaken = true;
                        handshaking--;
                        connected.incrementAndGet();
                        poll(conn);
                    }
                    if (conn.appOut != null && conn.appOut.hasRemaining()) {
                        wrap(conn, conn.appOut);
                        continue;
                    }
                    if (!unwrap(conn)) {
                        return;
                    }
                }
            }
        }
    }

    private void wrap(Conn conn, ByteBuffer source) throws SSLException {
        SSLEngineResult result = conn.engine.wrap(source, conn.netOut);
        if (result.getStatus() == SSLEngineResult.Status.CLOSED) {
            close(conn, "TLS closed");
        } else if (result.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
            throw new SSLException("network output buffer full");
        }
    }

    /** @return false when more bytes must be read first */
    private boolean unwrap(Conn conn) throws SSLException {
        conn.netIn.flip();
        SSLEngineResult result;
        try {
            result = conn.engine.unwrap(conn.netIn, appIn);
        } finally {
            conn.netIn.compact();
        }
        switch (result.getStatus()) {
            case BUFFER_UNDERFLOW -> {
                return false;
            }
            case CLOSED -> {
                close(conn, "TLS closed by the server");
                return false;
            }
            case BUFFER_OVERFLOW -> throw new SSLException("application buffer full");
            default -> { }
        }
        if (appIn.position() > 0) {
            appIn.flip();
            conn.response.append(appIn);
            appIn.clear();
            response(conn);
        }
        return result.bytesConsumed() > 0 || result.bytesProduced() > 0
                || conn.engine.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING;
    }

    private void poll(Conn conn) {
        conn.state = State.POLLING;
        conn.send("GET " + POLL_PATH + "?wait=300 HTTP/1.1\r\nHost: " + host(conn.node) + "\r\n\r\n");
        parked.incrementAndGet();
    }

    private void report(Conn conn, String order, String command) {
        conn.state = State.REPORTING;
        String body = "bench node " + identities.id(conn.node) + ": " + command + " done\n\n" + order + " exit 0\n";
        byte[] bytes = body.getBytes(StandardCharsets.US_ASCII);
        conn.lastReport = "PUT " + POLL_PATH + "/" + order + " HTTP/1.1\r\nHost: " + host(conn.node)
                + (contentType ? "\r\nContent-Type: text/plain" : "") + "\r\nContent-Length: " + bytes.length
                + "\r\n\r\n" + body;
        conn.send(conn.lastReport);
    }

    /** Handles every complete response in the connection's buffer. */
    private void response(Conn conn) {
        Response response;
        while ((response = conn.response.next()) != null) {
            long now = System.nanoTime();
            if (conn.state == State.POLLING) {
                parked.decrementAndGet();
                if (response.status == 200) {
                    String line = new String(response.body, StandardCharsets.US_ASCII).strip();
                    String[] words = line.split(" ");
                    listener.order(conn.node, words.length > 1 ? words[1] : "", now);
                    orders.incrementAndGet();
                    report(conn, words[0], words.length > 1 ? words[1] : "");
                } else if (response.status == 204) {
                    pollsAnswered204.incrementAndGet();
                    poll(conn);
                } else {
                    unexpected(conn, "poll", response);
                    later(conn, () -> poll(conn));
                }
            } else if (conn.state == State.REPORTING) {
                if (response.status == 204) {
                    listener.reported(conn.node, now);
                    reports.incrementAndGet();
                    poll(conn);
                } else {
                    unexpected(conn, "report", response);
                    String again = conn.lastReport;
                    later(conn, () -> conn.send(again));
                }
            }
        }
    }

    private void unexpected(Conn conn, String what, Response response) {
        unexpected.incrementAndGet();
        lastFailure = "node " + conn.node + ": " + what + " answered " + response.status + " "
                + new String(response.body, 0, Math.min(200, response.body.length), StandardCharsets.UTF_8);
    }

    private void later(Conn conn, Runnable action) {
        retried.incrementAndGet();
        conn.retry = action;
        retries.add(new long[] {System.nanoTime() + RETRY_NANOS, conn.node});
    }

    private void failed(Conn conn, String why) {
        failures.incrementAndGet();
        lastFailure = (conn == null ? "" : "node " + conn.node + ": ") + why;
        if (conn != null) {
            close(conn, why);
        }
    }

    private void close(Conn conn, String why) {
        if (!conn.open) {
            return;
        }
        conn.open = false;
        if (!conn.handshaken) {
            handshaking--;
        } else {
            connected.decrementAndGet();
            if (conn.state == State.POLLING) {
                parked.decrementAndGet();
            }
        }
        lastFailure = "node " + conn.node + ": " + why;
        engineNodes.remove(conn.engine);
        try {
            conn.channel.close();
        } catch (IOException ignored) {
            // Closing anyway.
        }
    }

    @Override
    public void close() {
        stopping = true;
        selector.wakeup();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Conn conn : conns) {
            if (conn != null) {
                try {
                    conn.channel.close();
                } catch (IOException ignored) {
                    // Closing anyway.
                }
            }
        }
        try {
            selector.close();
        } catch (IOException ignored) {
            // Closing anyway.
        }
    }

    private enum State { HANDSHAKING, POLLING, REPORTING }

    /** One node's connection; touched by the generator's thread only. */
    private final class Conn {
        final int node;
        final SocketChannel channel;
        final SSLEngine engine;
        final ByteBuffer netIn;
        final ByteBuffer netOut;
        final ResponseReader response = new ResponseReader();
        ByteBuffer appOut;
        boolean handshaken;
        boolean open = true;
        State state = State.HANDSHAKING;
        String lastReport;
        Runnable retry;

        Conn(int node, SocketChannel channel, SSLEngine engine) {
            this.node = node;
            this.channel = channel;
            this.engine = engine;
            SSLSession session = engine.getSession();
            this.netIn = ByteBuffer.allocate(session.getPacketBufferSize());
            this.netOut = ByteBuffer.allocate(session.getPacketBufferSize());
        }

        void send(String request) {
            appOut = ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII));
        }
    }

    /** One HTTP/1.1 response: its status and body. */
    private record Response(int status, byte[] body) {}

    /** Splits a connection's decrypted bytes into responses: Content-Length or chunked bodies. */
    private static final class ResponseReader {
        private byte[] bytes = new byte[512];
        private int length;

        void append(ByteBuffer buffer) {
            int n = buffer.remaining();
            if (length + n > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + n));
            }
            buffer.get(bytes, length, n);
            length += n;
        }

        Response next() {
            int headEnd = indexOf("\r\n\r\n", 0);
            if (headEnd < 0) {
                return null;
            }
            String head = new String(bytes, 0, headEnd, StandardCharsets.ISO_8859_1);
            String[] lines = head.split("\r\n");
            int status = Integer.parseInt(lines[0].split(" ")[1]);
            int contentLength = 0;
            boolean chunked = false;
            for (int i = 1; i < lines.length; i++) {
                String lower = lines[i].toLowerCase(java.util.Locale.ROOT);
                if (lower.startsWith("content-length:")) {
                    contentLength = Integer.parseInt(lower.substring(15).strip());
                } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                    chunked = true;
                }
            }
            int bodyStart = headEnd + 4;
            byte[] body;
            int end;
            if (chunked) {
                java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
                int at = bodyStart;
                while (true) {
                    int lineEnd = indexOf("\r\n", at);
                    if (lineEnd < 0) {
                        return null;
                    }
                    String size = new String(bytes, at, lineEnd - at, StandardCharsets.ISO_8859_1);
                    int semicolon = size.indexOf(';');
                    int n = Integer.parseInt((semicolon < 0 ? size : size.substring(0, semicolon)).strip(), 16);
                    if (n == 0) {
                        int trailerEnd = indexOf("\r\n", lineEnd + 2);
                        if (trailerEnd < 0) {
                            return null;
                        }
                        end = trailerEnd + 2;
                        break;
                    }
                    if (lineEnd + 2 + n + 2 > length) {
                        return null;
                    }
                    out.write(bytes, lineEnd + 2, n);
                    at = lineEnd + 2 + n + 2;
                }
                body = out.toByteArray();
            } else {
                if (bodyStart + contentLength > length) {
                    return null;
                }
                body = Arrays.copyOfRange(bytes, bodyStart, bodyStart + contentLength);
                end = bodyStart + contentLength;
            }
            System.arraycopy(bytes, end, bytes, 0, length - end);
            length -= end;
            return new Response(status, body);
        }

        private int indexOf(String text, int from) {
            byte[] pattern = text.getBytes(StandardCharsets.ISO_8859_1);
            outer:
            for (int i = from; i + pattern.length <= length; i++) {
                for (int j = 0; j < pattern.length; j++) {
                    if (bytes[i + j] != pattern[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }
    }

    /** Presents, on each engine, the certificate of the node that engine belongs to. */
    private final class PerEngineKeys extends X509ExtendedKeyManager {
        @Override
        public String chooseEngineClientAlias(String[] keyTypes, Principal[] issuers, SSLEngine engine) {
            Integer node = engineNodes.get(engine);
            if (node == null) {
                return null;
            }
            String algorithm = identities.key(node).getAlgorithm();
            return Arrays.asList(keyTypes).contains(algorithm.startsWith("EC") ? "EC" : algorithm)
                    ? node.toString() : null;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return new X509Certificate[] {identities.certificate(Integer.parseInt(alias))};
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return identities.key(Integer.parseInt(alias));
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return null;
        }
    }

    /** Trusts the server's own certificate's key and nothing else, as agents pin it. */
    private static final class PinnedServer extends X509ExtendedTrustManager {
        private final List<byte[]> pinned = new ArrayList<>();

        PinnedServer(Collection<X509Certificate> servers) {
            for (X509Certificate server : servers) {
                pinned.add(server.getPublicKey().getEncoded());
            }
        }

        private void check(X509Certificate[] chain) throws java.security.cert.CertificateException {
            if (chain.length == 0 || pinned.stream().noneMatch(p -> Arrays.equals(chain[0].getPublicKey().getEncoded(),
                    p))) {
                throw new java.security.cert.CertificateException("not the pinned server key");
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws java.security.cert.CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws java.security.cert.CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType)
                throws java.security.cert.CertificateException {
            check(chain);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws java.security.cert.CertificateException {
            throw new java.security.cert.CertificateException("client side only");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws java.security.cert.CertificateException {
            throw new java.security.cert.CertificateException("client side only");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType)
                throws java.security.cert.CertificateException {
            throw new java.security.cert.CertificateException("client side only");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
