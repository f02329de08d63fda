package io.pintle.bench.hostile;

import io.pintle.client.ClientTls;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * The attacking host: 127.0.0.2, no client certificate (every attack here needs none), the server authenticated by
 * its key pin. The server counts it apart from the victim on 127.0.0.1. Also what the attacker saw, by status or
 * by way of failing.
 */
final class Attacker {
    static final String ADDRESS = "127.0.0.2";
    private static final Pattern STATUS_LINE = Pattern.compile("^HTTP/1\\.1 (\\d{3}) ");

    private final SSLContext tls;
    private final int port;
    private final Map<String, LongAdder> seen = new ConcurrentHashMap<>();

    Attacker(HostileLayout layout) throws Exception {
        this.tls = ClientTls.context((KeyManager[]) null, Set.of(layout.demo().serverPin()));
        this.port = layout.port();
    }

    int port() {
        return port;
    }

    /**
     * @param receiveBuffer the socket's receive buffer in bytes, or 0 for the system's
     * @return a TLS connection from the attacker's address, handshake done
     */
    SSLSocket connect(int receiveBuffer) throws IOException {
        SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket();
        if (receiveBuffer > 0) {
            // Before connect, so that the window the kernel advertises is small from the start.
            socket.setReceiveBufferSize(receiveBuffer);
        }
        socket.bind(new InetSocketAddress(ADDRESS, 0));
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        socket.setSoTimeout(10_000);
        socket.startHandshake();
        return socket;
    }

    /** @return a started HTTP/2 client whose connections come from the attacker's address */
    HTTP2Client http2() throws Exception {
        HTTP2Client client = new HTTP2Client();
        SslContextFactory.Client ssl = new SslContextFactory.Client();
        ssl.setSslContext(tls);
        // The server is authenticated by its key pin (in the context's trust manager), as Rudder agents do.
        ssl.setEndpointIdentificationAlgorithm(null);
        client.getClientConnector().setSslContextFactory(ssl);
        client.getClientConnector().setBindAddress(new InetSocketAddress(ADDRESS, 0));
        client.start();
        return client;
    }

    /** @return the HTTP/2 destination address */
    InetSocketAddress server() {
        return new InetSocketAddress("127.0.0.1", port);
    }

    static void write(SSLSocket socket, String text) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /**
     * Reads up to {@code max} bytes of an HTTP/1.1 answer, as much as the first reads give.
     *
     * @return the status, or -1 when no status line came
     */
    static int readStatus(SSLSocket socket, int max) throws IOException {
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[max];
        int n = 0;
        while (n < 12) {
            int read = in.read(buffer, n, max - n);
            if (read < 0) {
                break;
            }
            n += read;
        }
        Matcher status = STATUS_LINE.matcher(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
        return status.find() ? Integer.parseInt(status.group(1)) : -1;
    }

    /** Counts one outcome: a status ("503") or a way of failing. */
    void saw(String what) {
        saw(what, 1);
    }

    /** Counts {@code times} of one outcome (nothing when 0). */
    void saw(String what, long times) {
        if (times > 0) {
            seen.computeIfAbsent(what, k -> new LongAdder()).add(times);
        }
    }

    /** @return what was seen since the last call, "503 × 215, 200 × 25", and forgets it */
    String drainSeen() {
        Map<String, Long> counts = new TreeMap<>();
        seen.forEach((what, count) -> counts.put(what, count.sum()));
        seen.clear();
        return counts.entrySet().stream()
                .map(e -> String.format(java.util.Locale.ROOT, "%s × %,d", e.getKey(), e.getValue()))
                .collect(Collectors.joining(", "));
    }
}
