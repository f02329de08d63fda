package io.pintle.server.testing;

import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * A CFEngine protocol client written from libcfnet's description, for the requests a test needs to send exactly
 * (cf-agent and cf-net send the usual ones): TLS with a certificate of the agent's RSA key, the version and
 * IDENTITY lines, then transactions ({@code "t <len>"} NUL-padded to 8 bytes).
 */
public final class CfProtocol implements AutoCloseable {
    private final SSLSocket socket;
    private final InputStream in;
    private final OutputStream out;
    private String hello;

    private CfProtocol(SSLSocket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    /**
     * Connects and handshakes; reads the server's version line.
     *
     * @param port the CFEngine listener's port on 127.0.0.1
     * @param key the agent's key pair
     * @return a client after TLS, before identification
     */
    public static CfProtocol connect(int port, KeyPair key) throws Exception {
        return connect(port, key, "127.0.0.1");
    }

    /**
     * @param port the CFEngine listener's port on 127.0.0.1
     * @param key the agent's key pair
     * @param local the loopback address to connect from
     * @return a client after TLS, before identification
     */
    public static CfProtocol connect(int port, KeyPair key, String local) throws Exception {
        X509Certificate certificate = SelfSigned.certificate(key, SelfSigned.subject(null),
                Instant.now().minus(Duration.ofMinutes(5)), Instant.now().plus(Duration.ofDays(1)));
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setKeyEntry("agent", key.getPrivate(), "x".toCharArray(), new Certificate[] {certificate});
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, "x".toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), new TrustManager[] {new AnyServer()}, new SecureRandom());
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(
                java.net.InetAddress.getByName("127.0.0.1"), port, java.net.InetAddress.getByName(local), 0);
        socket.setSoTimeout(30_000);
        socket.startHandshake();
        CfProtocol client = new CfProtocol(socket);
        client.hello = client.line();
        return client;
    }

    /** @return the server's first line ({@code CFE_v3 ...}) */
    public String hello() {
        return hello;
    }

    /** @return the server's certificate, whose key agents check against their ppkeys */
    public X509Certificate serverCertificate() throws Exception {
        return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }

    /**
     * Sends the version and IDENTITY lines; reads the answer.
     *
     * @param version the protocol version asked for
     * @return the server's answer line ({@code OK WELCOME ...}), or null when it closed the connection
     */
    public String identify(int version) throws IOException {
        out.write(("CFE_v" + version + " cf-agent 3.21.0\nIDENTITY USERNAME=root\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return line();
    }

    /**
     * @param payload a request's bytes
     */
    public void send(byte[] payload) throws IOException {
        byte[] header = new byte[8];
        byte[] text = ("t " + payload.length).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(text, 0, header, 0, text.length);
        out.write(header);
        out.write(payload);
        out.flush();
    }

    /**
     * @param request a request's text
     */
    public void send(String request) throws IOException {
        send(request.getBytes(StandardCharsets.UTF_8));
    }

    /** @return the next transaction's payload, or null at the end of the stream */
    public byte[] receive() throws IOException {
        byte[] header = in.readNBytes(8);
        if (header.length < 8) {
            return null;
        }
        String text = new String(header, StandardCharsets.US_ASCII).replace("\0", "");
        int length = Integer.parseInt(text.substring(2).trim());
        byte[] payload = in.readNBytes(length);
        return payload.length == length ? payload : null;
    }

    /** @return the next transaction's payload as text (up to its first NUL), or null at the end of the stream */
    public String receiveText() throws IOException {
        byte[] payload = receive();
        if (payload == null) {
            return null;
        }
        int end = 0;
        while (end < payload.length && payload[end] != 0) {
            end++;
        }
        return new String(payload, 0, end, StandardCharsets.UTF_8);
    }

    /**
     * @param count bytes to read as they come (a file's bytes after {@code GET})
     * @return them, fewer at the end of the stream
     */
    public byte[] raw(int count) throws IOException {
        return in.readNBytes(count);
    }

    /** @return whether the server closed the connection (the next read finds the end of the stream) */
    public boolean closedByServer() {
        try {
            return in.read() < 0;
        } catch (IOException e) {
            return true;
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0 && b != '\n') {
            line.write(b);
        }
        return b < 0 && line.size() == 0 ? null : line.toString(StandardCharsets.US_ASCII);
    }

    /**
     * @param path a path
     * @param digest its expected digest (16 bytes, MD5)
     * @return the {@code MD5} request, as cf-agent builds it: the text, two NULs, the digest
     */
    public static byte[] md5Request(String path, byte[] digest) {
        byte[] text = ("MD5 " + path).getBytes(StandardCharsets.UTF_8);
        byte[] request = Arrays.copyOf(text, text.length + 2 + digest.length);
        System.arraycopy(digest, 0, request, text.length + 2, digest.length);
        return request;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** Agents check the server's key against ppkeys after the handshake; the certificate itself is not verified. */
    private static final class AnyServer implements X509TrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
            throw new UnsupportedOperationException("client side only");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
            // The test compares the server's key itself.
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
