package io.pintle.client;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.MediaTypes;
import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.api.dto.RemoteRunRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * Calls Pintle's remote run on another server (a relay or a node) and reads its NDJSON events as they come: mutual
 * TLS 1.3, the callee's key pinned per call (a relay calls many peers, each with its own pin, with one identity).
 * One connection per call, so that no pool outlives a pin; blocking, for a caller that already runs each call on
 * its own thread.
 */
public final class RemoteRunClient {
    /** A longer line is a broken or hostile peer: an agent's lines are short. */
    public static final int MAX_LINE_BYTES = 1024 * 1024;
    /** Problem details are small; more is not read. */
    private static final int MAX_PROBLEM_BYTES = 64 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private final KeyManager[] identity;
    private final Duration connectTimeout;
    private final Duration readTimeout;

    /**
     * @param chain the certificate chain this caller presents, leaf first
     * @param key its private key
     * @param connectTimeout how long a TCP connection may take
     * @param readTimeout how long the callee may stay silent (it sends keep-alive events every 30 s while its
     *     nodes run)
     * @throws GeneralSecurityException when the identity is unusable
     */
    public RemoteRunClient(List<X509Certificate> chain, PrivateKey key, Duration connectTimeout, Duration readTimeout)
            throws GeneralSecurityException {
        this.identity = ClientTls.keyManagers(chain, key);
        this.connectTimeout = connectTimeout;
        this.readTimeout = readTimeout;
    }

    /**
     * Posts a run and hands every event to {@code events}, on this thread, until the callee's {@code done} event.
     *
     * @param url the full remote-run URL, unversioned as Rudder's Apache serves it (a TLS listener refuses
     *     relayd's versioned {@code /rudder/relay-api/1/...}): {@code https://host:port/rudder/relay-api/remote-run/...}
     * @param pin the callee's key pin ({@code sha256//...})
     * @param request the run
     * @param headers extra request headers
     * @param events receives each event ({@code keepalive} included)
     * @throws ProblemException when the callee answers with an error status
     * @throws IOException when it cannot be reached, or the answer is cut or malformed
     * @throws GeneralSecurityException when the pin is unusable
     */
    public void run(URI url, String pin, RemoteRunRequest request, Map<String, String> headers,
            Consumer<RemoteRunEvent> events) throws IOException, ProblemException, GeneralSecurityException {
        run(url, Set.of(pin), request, headers, events);
    }

    /**
     * As {@link #run(URI, String, RemoteRunRequest, Map, Consumer)}, with any of several pins accepted.
     *
     * @param url the full remote-run URL (unversioned)
     * @param pins the callee's acceptable key pins
     * @param request the run
     * @param headers extra request headers
     * @param events receives each event ({@code keepalive} included)
     * @throws ProblemException when the callee answers with an error status
     * @throws IOException when it cannot be reached, or the answer is cut or malformed
     * @throws GeneralSecurityException when a pin is unusable
     */
    public void run(URI url, Set<String> pins, RemoteRunRequest request, Map<String, String> headers,
            Consumer<RemoteRunEvent> events) throws IOException, ProblemException, GeneralSecurityException {
        post(url, pins, "application/json", JSON.writeValueAsBytes(request), MediaTypes.NDJSON, headers, events,
                null);
    }

    /**
     * Posts a run of the agent ({@code run}, the only command relayd knows) in relayd's own form, which both a
     * relayd relay (behind Rudder's Apache) and a Pintle server take: {@code asynchronous=false},
     * {@code keep_output=true}, {@code classes}, {@code nodes}. A Pintle callee answers NDJSON events, asked for by
     * {@code Accept}; a relayd callee answers its {@code text/plain} output, each line handed to {@code text}.
     *
     * @param url the full remote-run URL (unversioned)
     * @param pins the callee's acceptable key pins (the node list's and its certificate's)
     * @param conditions comma-separated conditions, or empty
     * @param nodes the node ids for {@code remote-run/nodes}, or null for {@code nodes/<id>} and {@code all}
     * @param headers extra request headers
     * @param events receives each event of a Pintle callee
     * @param text receives each line of a relayd callee's text answer
     * @return whether the callee answered events (a Pintle), not relayd's text
     * @throws ProblemException when the callee answers with an error status
     * @throws IOException when it cannot be reached, or the answer is cut or malformed
     * @throws GeneralSecurityException when a pin is unusable
     */
    public boolean runForm(URI url, Set<String> pins, String conditions, List<String> nodes,
            Map<String, String> headers, Consumer<RemoteRunEvent> events, Consumer<String> text)
            throws IOException, ProblemException, GeneralSecurityException {
        StringBuilder form = new StringBuilder("asynchronous=false&keep_output=true");
        if (!conditions.isEmpty()) {
            form.append("&classes=").append(URLEncoder.encode(conditions, StandardCharsets.UTF_8));
        }
        if (nodes != null) {
            form.append("&nodes=").append(URLEncoder.encode(String.join(",", nodes), StandardCharsets.UTF_8));
        }
        return post(url, pins, "application/x-www-form-urlencoded",
                form.toString().getBytes(StandardCharsets.US_ASCII), MediaTypes.NDJSON + ", text/plain;q=0.5",
                headers, events, text);
    }

    private boolean post(URI url, Set<String> pins, String type, byte[] body, String accept,
            Map<String, String> headers, Consumer<RemoteRunEvent> events, Consumer<String> text)
            throws IOException, ProblemException, GeneralSecurityException {
        HttpsURLConnection connection = (HttpsURLConnection) url.toURL().openConnection();
        try {
            connection.setSSLSocketFactory(new Tls13Only(ClientTls.context(identity, pins).getSocketFactory()));
            // The pin is the identity check (curl --pinnedpubkey --insecure): host names are not in agents' certificates.
            connection.setHostnameVerifier((host, session) -> true);
            connection.setConnectTimeout(Math.toIntExact(connectTimeout.toMillis()));
            connection.setReadTimeout(Math.toIntExact(readTimeout.toMillis()));
            connection.setUseCaches(false);
            connection.setInstanceFollowRedirects(false);
            connection.setRequestMethod("POST");
            connection.setDoOutput(true);
            connection.setRequestProperty("Content-Type", type);
            connection.setRequestProperty("Accept", accept + ", " + MediaTypes.PROBLEM_JSON);
            headers.forEach(connection::setRequestProperty);
            connection.setFixedLengthStreamingMode(body.length);
            try (OutputStream out = connection.getOutputStream()) {
                out.write(body);
            }
            int status = connection.getResponseCode();
            if (status != HttpURLConnection.HTTP_OK) {
                InputStream error = connection.getErrorStream();
                byte[] problem = error == null ? new byte[0] : error.readNBytes(MAX_PROBLEM_BYTES);
                throw PintleClient.problem(status, problem);
            }
            String answered = connection.getContentType();
            boolean ndjson = answered != null && answered.toLowerCase(Locale.ROOT).startsWith(MediaTypes.NDJSON);
            try (InputStream in = connection.getInputStream()) {
                if (ndjson || text == null) {
                    read(in, events);
                } else {
                    readText(in, text);
                }
            }
            return ndjson || text == null;
        } finally {
            connection.disconnect();
        }
    }

    /**
     * Reads relayd's text answer to its end, line by line; a line longer than {@link #MAX_LINE_BYTES} is handed on
     * in pieces (never held whole).
     */
    private static void readText(InputStream in, Consumer<String> text) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        byte[] buffer = new byte[8192];
        int n;
        while ((n = in.read(buffer)) > 0) {
            for (int i = 0; i < n; i++) {
                if (buffer[i] == '\n' || line.size() >= MAX_LINE_BYTES) {
                    text.accept(stripCr(line));
                    line.reset();
                    if (buffer[i] == '\n') {
                        continue;
                    }
                }
                line.write(buffer[i]);
            }
        }
        if (line.size() > 0) {
            text.accept(stripCr(line));
        }
    }

    private static String stripCr(ByteArrayOutputStream line) {
        String text = line.toString(StandardCharsets.UTF_8);
        return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
    }

    /** Reads NDJSON events until {@code done}; end of stream before it is a cut answer. */
    private static void read(InputStream in, Consumer<RemoteRunEvent> events) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        byte[] buffer = new byte[8192];
        int n;
        while ((n = in.read(buffer)) > 0) {
            for (int i = 0; i < n; i++) {
                if (buffer[i] != '\n') {
                    if (line.size() >= MAX_LINE_BYTES) {
                        throw new IOException("an event line is longer than " + MAX_LINE_BYTES + " bytes");
                    }
                    line.write(buffer[i]);
                    continue;
                }
                if (line.size() > 0) {
                    RemoteRunEvent event = JSON.readValue(line.toByteArray(), RemoteRunEvent.class);
                    line.reset();
                    events.accept(event);
                    if (RemoteRunEvent.DONE.equals(event.type())) {
                        return;
                    }
                }
            }
        }
        throw new IOException("the answer ended before its last event (the connection was cut)");
    }

    /** Offers TLS 1.3 only, whatever the JDK's client default. */
    private static final class Tls13Only extends SSLSocketFactory {
        private static final String[] PROTOCOLS = {"TLSv1.3"};
        private final SSLSocketFactory delegate;

        Tls13Only(SSLSocketFactory delegate) {
            this.delegate = delegate;
        }

        private static Socket restrict(Socket socket) {
            ((SSLSocket) socket).setEnabledProtocols(PROTOCOLS);
            return socket;
        }

        @Override
        public String[] getDefaultCipherSuites() {
            return delegate.getDefaultCipherSuites();
        }

        @Override
        public String[] getSupportedCipherSuites() {
            return delegate.getSupportedCipherSuites();
        }

        @Override
        public Socket createSocket() throws IOException {
            return restrict(delegate.createSocket());
        }

        @Override
        public Socket createSocket(Socket socket, String host, int port, boolean autoClose) throws IOException {
            return restrict(delegate.createSocket(socket, host, port, autoClose));
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return restrict(delegate.createSocket(host, port));
        }

        @Override
        public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
            return restrict(delegate.createSocket(host, port, localHost, localPort));
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException {
            return restrict(delegate.createSocket(host, port));
        }

        @Override
        public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
                throws IOException {
            return restrict(delegate.createSocket(address, port, localAddress, localPort));
        }
    }
}
