package io.pintle.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.NetworkChannel;
import java.nio.channels.SelectableChannel;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpClientTransport;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

/**
 * The load generator: a Jetty {@link HttpClient} presenting the node's certificate, with every thread it runs on
 * named {@value #THREAD_NAME}-..., so that {@link CpuSampler} can tell its CPU time from the servers'. One is
 * started per measured run and stopped after it.
 */
final class LoadClient {
    /** Thread name prefix of the client's pool and scheduler. */
    static final String THREAD_NAME = "bench-client";
    /** Client worker threads: selectors, TLS and callbacks; far more than 2 cores can keep busy. */
    private static final int MAX_THREADS = 64;

    private final HttpClient http;
    private final HandshakeCounter handshakes;

    private LoadClient(HttpClient http, HandshakeCounter handshakes) {
        this.http = http;
        this.handshakes = handshakes;
    }

    /** Where a client's connections come from. */
    enum Hosts {
        /** All from the one address the kernel picks (127.0.0.1 to a loopback server): one host. */
        ONE,
        /**
         * Each new connection from the next of {@code concurrency} {@link LoopbackHosts}, in turn: one host per
         * connection, as a fleet's nodes.
         */
        ONE_PER_CONNECTION
    }

    /**
     * Starts a client whose connections all come from one host.
     *
     * @param protocol HTTP/1.1 (one connection per request in flight) or HTTP/2 (one connection, multiplexed)
     * @param tls the node's mutual-TLS context
     * @param concurrency the number of requests that will be kept in flight
     * @return the started client
     * @throws Exception if Jetty fails to start it
     */
    static LoadClient start(Protocol protocol, SSLContext tls, int concurrency) throws Exception {
        return start(protocol, tls, concurrency, Hosts.ONE);
    }

    /**
     * Starts a client.
     *
     * @param protocol HTTP/1.1 (one connection per request in flight) or HTTP/2 (one connection, multiplexed)
     * @param tls the node's mutual-TLS context
     * @param concurrency the number of requests that will be kept in flight
     * @param hosts where its connections come from
     * @return the started client
     * @throws Exception if Jetty fails to start it
     */
    static LoadClient start(Protocol protocol, SSLContext tls, int concurrency, Hosts hosts) throws Exception {
        ClientConnector connector = switch (hosts) {
            case ONE -> new ClientConnector();
            case ONE_PER_CONNECTION -> new HostPerConnection(concurrency);
        };
        connector.setSslContextFactory(sslContextFactory(tls));
        QueuedThreadPool threads = new QueuedThreadPool(MAX_THREADS);
        threads.setName(THREAD_NAME);
        connector.setExecutor(threads);
        connector.setScheduler(new ScheduledExecutorScheduler(THREAD_NAME + "-scheduler", false));
        HttpClient http = new HttpClient(transport(protocol, connector));
        http.setMaxConnectionsPerDestination(protocol == Protocol.HTTP_2 ? 1 : concurrency);
        http.setFollowRedirects(false);
        // No Accept-Encoding: Rudder agents' curl does not ask for compression either.
        http.getContentDecoderFactories().clear();
        HandshakeCounter handshakes = new HandshakeCounter();
        http.addBean(handshakes);
        http.start();
        return new LoadClient(http, handshakes);
    }

    /** @return the Jetty client */
    HttpClient http() {
        return http;
    }

    /** @return TLS handshakes completed so far by this client's connections */
    long handshakes() {
        return handshakes.succeeded.sum();
    }

    /**
     * Stops the client, aborting anything still in flight.
     *
     * @throws Exception if Jetty fails to stop it
     */
    void stop() throws Exception {
        http.stop();
    }

    private static SslContextFactory.Client sslContextFactory(SSLContext tls) {
        SslContextFactory.Client ssl = new SslContextFactory.Client();
        ssl.setSslContext(tls);
        // The server is authenticated by key pin (in the context's trust manager), not by host name.
        ssl.setEndpointIdentificationAlgorithm(null);
        // Engines are created without host and port, so the JDK never offers a session to resume: every new
        // connection is a full handshake with client certificate, as for an agent run.
        ssl.setSessionCachingEnabled(false);
        return ssl;
    }

    private static HttpClientTransport transport(Protocol protocol, ClientConnector connector) {
        return switch (protocol) {
            case HTTP_1_1 -> new HttpClientTransportOverHTTP(connector);
            case HTTP_2 -> new HttpClientTransportOverHTTP2(new HTTP2Client(connector));
        };
    }

    /**
     * Binds each new socket to the next loopback host before it connects. {@link ClientConnector} binds only to its
     * one {@code bindAddress} (none here), right after {@code configure}; binding in {@code configure} is the hook it
     * leaves for a per-connection address.
     */
    private static final class HostPerConnection extends ClientConnector {
        private final int hosts;
        private final AtomicInteger next = new AtomicInteger();

        HostPerConnection(int hosts) {
            if (hosts < 1 || hosts > LoopbackHosts.MAX_HOSTS) {
                throw new IllegalArgumentException("hosts must be from 1 to " + LoopbackHosts.MAX_HOSTS + ": " + hosts);
            }
            this.hosts = hosts;
        }

        @Override
        protected void configure(SelectableChannel channel) throws IOException {
            super.configure(channel);
            if (channel instanceof NetworkChannel network) {
                network.bind(new InetSocketAddress(LoopbackHosts.host(Math.floorMod(next.getAndIncrement(), hosts)),
                        0));
            }
        }
    }

    /** Counts handshakes; Jetty notifies handshake listeners that are beans of the {@link HttpClient}. */
    private static final class HandshakeCounter implements SslHandshakeListener {
        private final LongAdder succeeded = new LongAdder();

        @Override
        public void handshakeSucceeded(Event event) {
            succeeded.increment();
        }
    }
}
