package io.pintle.server.http.webapp;

import io.pintle.server.http.Exchange;
import io.pintle.server.http.Problems;
import io.pintle.server.access.Route;
import io.pintle.server.access.Credentials;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.problem.PintleException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.compression.server.CompressionConfig;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The web interface of a root behind Pintle's TLS listener, as Rudder's single vhost has it ({@code ProxyPass
 * "/rudder" "http://localhost:8080/rudder"}, relayd's {@code /rudder/relay-api} excepted): requests of the
 * {@link Route#WEBAPP} route go to the webapp through Jetty's {@link ProxyHandler.Reverse}, streamed both ways
 * with no thread held while the webapp thinks; every other request goes on to the rest of the tree. It sits below
 * the overload gate (the webapp's own slots and queue, {@code [limits.webapp]}) and compression (the webapp's text
 * gzipped for clients that accept it, as Rudder's vhost deflates it; {@link #compression()}), and above the file
 * pipeline and Jersey, neither of which sees a proxied request.
 *
 * <p>As Apache's {@code mod_proxy} without {@code ProxyPreserveHost} (Rudder sets none): the webapp gets its own
 * address as {@code Host}, the client's in {@code X-Forwarded-Host}, and redirects to its own address are turned
 * back into the client's ({@code ProxyPassReverse}). Unlike Apache, which appends to them, the {@code
 * X-Forwarded-*} and {@code Forwarded} headers a client sends are replaced: Pintle is the edge, and the webapp must
 * not take a client's word for its address. The upstream down answers 502, silent past {@code [webapp] timeout}
 * 504, each a problem+json saying which. The rest of Rudder's webapp vhost too: {@code /} redirects to {@code
 * /rudder}, the legacy unauthenticated API paths are for this machine only, the webapp's {@code Server} header is
 * dropped and its cookies get {@code HttpOnly} and {@code Secure}.
 */
public final class WebappProxy extends Handler.Wrapper {
    private static final Logger LOG = LoggerFactory.getLogger(WebappProxy.class);
    /** Threads of the proxy's client: it only moves buffers between sockets, never blocks on them. */
    static final int CLIENT_THREADS = 16;
    /** Client headers about the path to the server: Pintle writes its own. */
    private static final Set<String> FORWARDING_HEADERS = Set.of(HttpHeader.FORWARDED.asString(),
            HttpHeader.X_FORWARDED_FOR.asString(), HttpHeader.X_FORWARDED_HOST.asString(),
            HttpHeader.X_FORWARDED_PROTO.asString(), HttpHeader.X_FORWARDED_PORT.asString(),
            HttpHeader.X_FORWARDED_SERVER.asString(), HttpHeader.VIA.asString());

    private static final String API_VERSION = "X-API-Version";
    /** Rudder's webapp vhost: {@code Header edit Set-Cookie ...} adds these where a cookie lacks them. */
    private static final Pattern HTTP_ONLY = Pattern.compile("(?i);\\s*HttpOnly(;|$)");
    private static final Pattern SECURE = Pattern.compile("(?i);\\s*Secure(;|$)");

    private final Reverse proxy;

    /**
     * @param webapp where the webapp is, and its timeouts; {@link ServerConfig.Webapp#enabled()}
     * @param pool the webapp class's slots, which bound the connections to it
     */
    public WebappProxy(ServerConfig.Webapp webapp, ServerConfig.Pool pool) {
        super(new Reverse(webapp, pool));
        this.proxy = (Reverse) getHandler();
    }

    @Override
    public InvocationType getInvocationType() {
        // Jetty's proxy never blocks the thread that calls it: it sends and relays by callbacks.
        return InvocationType.NON_BLOCKING;
    }

    /**
     * @return how the webapp's answers are compressed (when the client accepts gzip): the types Rudder's vhost
     *     deflates ({@code AddOutputFilterByType DEFLATE ...}), whatever the method; an answer the webapp
     *     compressed itself is left as it is
     */
    public static CompressionConfig compression() {
        CompressionConfig.Builder builder = CompressionConfig.builder();
        for (String type : List.of("text/plain", "text/html", "text/xml", "text/javascript", "text/css",
                "application/xml", "application/xhtml+xml", "application/rss+xml", "image/svg+xml",
                "application/json", "application/javascript", "application/x-javascript",
                "application/problem+json")) {
            builder.compressIncludeMimeType(type);
        }
        for (String method : Route.WEBAPP.proxiedMethods()) {
            builder.compressIncludeMethod(method);
        }
        return builder.build();
    }

    @Override
    protected void doStart() throws Exception {
        super.doStart();
        LOG.info("web interface: /rudder/ (but /rudder/relay-api) proxied to {}, timeout {} s", proxy.upstream,
                proxy.webapp.timeout().toSeconds());
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        Exchange exchange = Exchange.of(request);
        try {
            exchange.authorize(new Credentials(null, request.getHeaders().get(API_VERSION), Credentials.NONE.logins()));
        } catch (PintleException refusal) {
            Problems.write(refusal, request, response, callback);
            return true;
        }
        if (exchange.route() == Route.ROOT) {
            // Rudder's webapp vhost: RewriteRule ^/$ /rudder [R].
            Response.sendRedirect(request, response, callback, HttpStatus.FOUND_302, "/rudder", true);
            return true;
        }
        // The webapp may think longer than the TLS listener's idle timeout (an API call that runs agents):
        // [webapp] timeout bounds the wait instead, and a client that goes away is seen when its connection closes.
        request.addIdleTimeoutListener(timeout -> false);
        return super.handle(request, response, callback);
    }

    /** Jetty's reverse proxy, told where the webapp is and how Apache talks to it. */
    private static final class Reverse extends ProxyHandler.Reverse {
        private final URI upstream;
        private final String origin;
        private final ServerConfig.Webapp webapp;
        private final ServerConfig.Pool pool;

        Reverse(ServerConfig.Webapp webapp, ServerConfig.Pool pool) {
            super(request -> HttpURI.build(webapp.proxy().toString())
                    .path(request.getHttpURI().getPath())
                    .query(request.getHttpURI().getQuery()));
            this.upstream = webapp.proxy();
            this.origin = "http://" + upstream.getRawAuthority();
            this.webapp = webapp;
            this.pool = pool;
            // Apache without ProxyPreserveHost: the webapp sees its own address.
            setProxyToServerHost(upstream.getRawAuthority());
        }

        @Override
        public InvocationType getInvocationType() {
            // Connects, reads and writes are asynchronous and the upstream's name is resolved off the calling
            // thread (HttpClient's asynchronous resolver): handling never blocks.
            return InvocationType.NON_BLOCKING;
        }

        @Override
        protected HttpClient newHttpClient() {
            ClientConnector connector = new ClientConnector();
            QueuedThreadPool threads = new QueuedThreadPool(CLIENT_THREADS, 1);
            threads.setName("pintle-webapp");
            threads.setReservedThreads(0);
            connector.setExecutor(threads);
            connector.setConnectTimeout(webapp.connectTimeout());
            return new HttpClient(new HttpClientTransportOverHTTP(connector));
        }

        @Override
        protected void configureHttpClient(HttpClient client) {
            super.configureHttpClient(client);
            client.setConnectTimeout(webapp.connectTimeout().toMillis());
            // As many connections as the class has slots; the gate's queue is where requests wait, not here.
            client.setMaxConnectionsPerDestination(pool.concurrency());
            client.setMaxRequestsQueuedPerDestination(Math.max(1024, pool.concurrency()));
            client.setUserAgentField(null);
        }

        @Override
        protected org.eclipse.jetty.client.Request newProxyToServerRequest(Request clientToProxy, HttpURI uri) {
            return super.newProxyToServerRequest(clientToProxy, uri)
                    .idleTimeout(webapp.timeout().toMillis(), TimeUnit.MILLISECONDS);
        }

        @Override
        protected void addProxyHeaders(Request clientToProxy, org.eclipse.jetty.client.Request proxyToServer) {
            String host = clientHost(clientToProxy);
            proxyToServer.headers(headers -> {
                for (String name : FORWARDING_HEADERS) {
                    headers.remove(name);
                }
                headers.put(HttpHeader.X_FORWARDED_FOR, Request.getRemoteAddr(clientToProxy));
                headers.put(HttpHeader.X_FORWARDED_PROTO, "https");
                if (host != null) {
                    headers.put(HttpHeader.X_FORWARDED_HOST, host);
                }
            });
        }

        @Override
        protected HttpField filterServerToProxyResponseField(HttpField field) {
            if (field.getHeader() == HttpHeader.SERVER) {
                // Rudder's webapp vhost: "jetty is leaking its version in the Server header, remove it".
                return null;
            }
            if (field.getHeader() == HttpHeader.SET_COOKIE) {
                // Rudder's webapp vhost: every cookie HttpOnly and secure (the webapp sees plain HTTP).
                String cookie = field.getValue();
                if (!HTTP_ONLY.matcher(cookie).find()) {
                    cookie += "; HttpOnly";
                }
                if (!SECURE.matcher(cookie).find()) {
                    cookie += "; Secure";
                }
                return new HttpField(HttpHeader.SET_COOKIE, cookie);
            }
            return field;
        }

        @Override
        protected org.eclipse.jetty.client.Response.CompleteListener newServerToProxyResponseListener(
                Request clientToProxy, org.eclipse.jetty.client.Request proxyToServer, Response proxyToClient,
                Callback callback) {
            return new ProxyResponseListener(clientToProxy, proxyToServer, proxyToClient, callback) {
                @Override
                public void onHeaders(org.eclipse.jetty.client.Response serverToProxy) {
                    super.onHeaders(serverToProxy);
                    reverse(proxyToClient.getHeaders(), clientHost(clientToProxy));
                }
            };
        }

        /** Apache's ProxyPassReverse: the webapp's redirects to its own address go back to the client's. */
        private void reverse(HttpFields.Mutable headers, String host) {
            if (host == null) {
                return;
            }
            for (HttpHeader name : new HttpHeader[] {HttpHeader.LOCATION, HttpHeader.CONTENT_LOCATION}) {
                String value = headers.get(name);
                if (value != null && (value.equals(origin) || value.startsWith(origin + "/"))) {
                    headers.put(name, "https://" + host + value.substring(origin.length()));
                }
            }
        }

        @Override
        protected void onServerToProxyResponseFailure(Request clientToProxy,
                org.eclipse.jetty.client.Request proxyToServer, org.eclipse.jetty.client.Response serverToProxy,
                Response proxyToClient, Callback callback, Throwable failure) {
            PintleException refusal = refusal(failure);
            LOG.warn("{} {} from {}: {} ({})", clientToProxy.getMethod(), clientToProxy.getHttpURI().getPath(),
                    Request.getRemoteAddr(clientToProxy), refusal.detail(), failure.toString());
            if (proxyToClient.isCommitted()) {
                // Part of the answer is out: the client can only see it cut.
                callback.failed(failure);
                return;
            }
            proxyToClient.getHeaders().clear();
            Problems.write(refusal, clientToProxy, proxyToClient, callback);
        }

        private PintleException refusal(Throwable failure) {
            for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
                if (cause instanceof ConnectException || cause instanceof SocketTimeoutException) {
                    return cause instanceof SocketTimeoutException
                            ? new PintleException.UpstreamTimedOut("webapp-timeout", "the webapp at " + upstream
                                    + " did not accept a connection within " + webapp.connectTimeout().toSeconds()
                                    + " s ([webapp] connect_timeout)")
                            : new PintleException.UpstreamFailed("webapp-unreachable", "the webapp at " + upstream
                                    + " refused the connection: is it running (rudder-jetty)? ([webapp] proxy)");
                }
                if (cause instanceof TimeoutException) {
                    return new PintleException.UpstreamTimedOut("webapp-timeout", "the webapp at " + upstream
                            + " sent nothing for " + webapp.timeout().toSeconds() + " s ([webapp] timeout)");
                }
            }
            // The library's own words stay in the log line above, not in the answer.
            return new PintleException.UpstreamFailed("webapp-failed", "the exchange with the webapp at " + upstream
                    + " failed before its answer was complete; see Pintle's log for the cause");
        }

        private static String clientHost(Request request) {
            String host = request.getHeaders().get(HttpHeader.HOST);
            return host != null ? host : request.getHttpURI().getAuthority();
        }
    }
}
