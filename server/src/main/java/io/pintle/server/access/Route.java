package io.pintle.server.access;

import io.pintle.api.Routes;
import io.pintle.server.metrics.RouteClass;
import io.pintle.server.overload.WorkClass;
import io.pintle.server.uploads.UploadKind;
import java.util.Map;
import java.util.Set;

/**
 * The route table: every route family of both listeners, declared once with its metric class, its work class
 * (workers and queue on the TLS listener), who answers which of its methods ({@link #answerer}) and which access
 * rule decides it ({@link #rule}). The HTTP edge looks a request up here once; the dispatch step, the overload
 * gate, the file pipeline, Jersey's resources, the metrics and the access log all read the answer from the
 * request's exchange, and {@link Access#decide} reads the rule. {@code pintle explain} looks a path up here too.
 *
 * <p>On the TLS listener relayd's API is what Rudder's Apache exposes: {@code ProxyPass /rudder/relay-api/
 * http://127.0.0.1:3030/rudder/relay-api/1/} under {@code <Location /rudder/relay-api/> Require all denied}, opened
 * for {@code shared-folder}, {@code shared-files} and {@code remote-run} only. So those three families answer
 * under the unversioned prefix, and everything else below it, relayd's own versioned {@code /rudder/relay-api/1/...}
 * included, is {@link #RELAY_API_DENIED}. The admin listener, which plays relayd's 127.0.0.1:3030, answers both.
 * Templates name the versioned form: it is how the Jersey resources are written (the node-facing
 * application's pre-matching alias maps one onto the other).
 */
public enum Route {
    /** {@code /policies/{node}/{path}}: a node's own policies. */
    POLICIES(Listener.TLS, Routes.POLICIES + "/", false, RouteClass.POLICIES, WorkClass.FILES,
            Routes.POLICIES + "/{node}/{path}", Map.of("GET", Queries.TREE_VIEWS, "HEAD", Set.of())),
    /** {@code /common/{path}}: files every node of an allowed network reads. */
    COMMON(Listener.TLS, Routes.COMMON + "/", false, RouteClass.COMMON, WorkClass.FILES,
            Routes.COMMON + "/{path}", Map.of("GET", Queries.TREE_VIEWS, "HEAD", Set.of())),
    /** relayd's {@code shared-folder/{path}}, whose {@code HEAD ?hash=} compares a digest. */
    SHARED_FOLDER(Listener.TLS, Routes.SHARED_FOLDER + "/", true, RouteClass.SHARED_FOLDER, WorkClass.FILES,
            Routes.RELAY_API + Routes.SHARED_FOLDER + "/{path}",
            Map.of("GET", Queries.TREE_VIEWS, "HEAD", Set.of(Routes.HASH, Routes.HASH_TYPE))),
    /**
     * relayd's {@code shared-files/{target}/{source}/{id}}: the download ({@code GET}) is a file route; the upload
     * ({@code PUT}) and the presence check ({@code HEAD ?hash=}, which may be forwarded upstream) are Jersey's.
     */
    SHARED_FILES(Listener.TLS, Routes.SHARED_FILES + "/", true, RouteClass.SHARED_FILES, WorkClass.FILES,
            Routes.RELAY_API + Routes.SHARED_FILES + "/{target}/{source}/{fileId}", Map.of("GET", Set.of())),
    /**
     * The pull channel, Pintle's own: a node's poll for remote-run orders ({@code GET
     * /rudder/relay-api/remote-run/orders?wait=N}), parked by the order channel's handler on Jetty's core API, holding no
     * worker while it waits.
     */
    REMOTE_RUN_ORDERS(Listener.TLS, Routes.REMOTE_RUN_ORDERS, true, RouteClass.REMOTE_RUN, WorkClass.API,
            Routes.RELAY_API + Routes.REMOTE_RUN_ORDERS, Map.of("GET", Set.of(Routes.WAIT))),
    /** A node's report on one order ({@code PUT .../orders/{order}}: its agent's output), read by the order channel's handler. */
    REMOTE_RUN_ORDER(Listener.TLS, Routes.REMOTE_RUN_ORDERS + "/", true, RouteClass.REMOTE_RUN, WorkClass.UPLOADS,
            Routes.RELAY_API + Routes.REMOTE_RUN_ORDER, Map.of("PUT", Set.of())),
    /** relayd's {@code remote-run/...}. */
    REMOTE_RUN(Listener.TLS, Routes.REMOTE_RUN + "/", true, RouteClass.REMOTE_RUN, WorkClass.API, null, Map.of()),
    /**
     * The rest of {@code /rudder/relay-api/} on the TLS listener, {@code /rudder/relay-api/1/...} and
     * {@code system/...} included: refused with 403, as Apache's {@code Require all denied} (Jersey answers it).
     */
    RELAY_API_DENIED(Listener.TLS, Routes.RELAY_API_ALIAS + "/", false, RouteClass.OTHER, WorkClass.API, null,
            Map.of()),
    /** {@code PUT /inventories/{name}}: a new node's inventory (Jersey's uploads resource). */
    INVENTORIES(Listener.TLS, UploadKind.INVENTORIES.prefix(), false, RouteClass.INVENTORIES, WorkClass.UPLOADS,
            null, Map.of()),
    /** {@code PUT /inventory-updates/{name}}: an accepted node's inventory. */
    INVENTORY_UPDATES(Listener.TLS, UploadKind.INVENTORY_UPDATES.prefix(), false, RouteClass.INVENTORY_UPDATES,
            WorkClass.UPLOADS, null, Map.of()),
    /** {@code PUT /reports/{name}}: a run report. */
    REPORTS(Listener.TLS, UploadKind.REPORTS.prefix(), false, RouteClass.REPORTS, WorkClass.UPLOADS, null, Map.of()),
    /** {@code /uuid}: the server's node id, the first request of a new node. */
    UUID(Listener.TLS, Routes.UUID, false, RouteClass.UUID, WorkClass.API, Routes.UUID,
            Map.of("GET", Set.of(), "HEAD", Set.of())),
    /** {@code /v1/whoami}. */
    WHOAMI(Listener.TLS, Routes.WHOAMI, false, RouteClass.WHOAMI, WorkClass.API, null, Map.of()),
    /**
     * The webapp's {@code /rudder} and {@code /rudder/...}, but not relayd's {@code /rudder/relay-api}: proxied to
     * the webapp by the webapp proxy when {@code [webapp] proxy} is set (never the file pipeline nor Jersey),
     * otherwise a 404 problem from Jersey as any unknown path.
     */
    WEBAPP(Listener.TLS, "/rudder/", false, RouteClass.WEBAPP, WorkClass.WEBAPP, "/rudder/{path}", Map.of()),
    /**
     * {@code /} on the TLS listener: with {@code [webapp] proxy} set, redirected to {@code /rudder} as Rudder's
     * webapp vhost does ({@code RewriteRule ^/$ /rudder [R]}); otherwise a 404 problem from Jersey.
     */
    ROOT(Listener.TLS, "/", false, RouteClass.OTHER, WorkClass.API, null, Map.of()),
    /** Anything else on the TLS listener (Jersey answers it: 404 problem). */
    OTHER(Listener.TLS, null, false, RouteClass.OTHER, WorkClass.API, null, Map.of()),
    /** relayd's {@code system/...} and {@code remote-run/...} on the admin listener. */
    SYSTEM(Listener.ADMIN, "/rudder/relay-api/", false, RouteClass.SYSTEM, WorkClass.API, null, Map.of()),
    /** {@code /v1/status} on the admin listener. */
    STATUS(Listener.ADMIN, "/v1/status", false, RouteClass.STATUS, WorkClass.API, null, Map.of()),
    /** {@code /health} on the admin listener. */
    HEALTH(Listener.ADMIN, "/health", false, RouteClass.HEALTH, WorkClass.API, null, Map.of()),
    /** {@code /ready} on the admin listener. */
    READY(Listener.ADMIN, "/ready", false, RouteClass.HEALTH, WorkClass.API, null, Map.of()),
    /** {@code /metrics} on the admin listener. */
    METRICS(Listener.ADMIN, "/metrics", false, RouteClass.METRICS, WorkClass.API, null, Map.of()),
    /** Anything else on the admin listener. */
    ADMIN_OTHER(Listener.ADMIN, null, false, RouteClass.OTHER, WorkClass.API, null, Map.of());

    /** Which listener a route lives on. */
    public enum Listener {
        /** The node-facing TLS listener. */
        TLS,
        /** The loopback administration listener. */
        ADMIN
    }

    /** Query parameters (apart from enum constants, which cannot read the enum's own static fields). */
    private static final class Queries {
        /** What the file routes read on a GET: the directory views, their change list and subset, the wait. */
        static final Set<String> TREE_VIEWS = Set.of(Routes.VIEW, Routes.SINCE, Routes.ONLY, Routes.WAIT);
    }

    private static final Set<String> PROXIED_METHODS =
            Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS");
    private static final String ALIAS = Routes.RELAY_API_ALIAS;
    private static final Route[] VALUES = values();

    private final Listener listener;
    /** A prefix (ends with '/') or an exact path; null for the catch-all. */
    private final String path;
    private final boolean relayApi;
    private final RouteClass metricClass;
    private final WorkClass work;
    private final String template;
    private final Map<String, Set<String>> filePipeline;

    /**
     * @param listener where it lives
     * @param path its prefix (ending with '/') or exact path; relative to relayd's API for {@code relayApi}
     * @param relayApi whether it is one of relayd's API families Apache opens (unversioned prefix)
     * @param metricClass what its requests are counted under
     * @param work whose workers its requests use
     * @param template its public path template, where the file pipeline or the webapp proxy answers it (null
     *     otherwise)
     * @param filePipeline the methods answered on Jetty's core API (the file pipeline, or the order channel's handler
     *     for its two routes), each with the query parameters it reads
     */
    Route(Listener listener, String path, boolean relayApi, RouteClass metricClass, WorkClass work, String template,
            Map<String, Set<String>> filePipeline) {
        this.listener = listener;
        this.path = path;
        this.relayApi = relayApi;
        this.metricClass = metricClass;
        this.work = work;
        this.template = template;
        this.filePipeline = filePipeline;
    }

    /** Who answers a request, chosen once per request by the dispatch step. */
    public enum Answerer {
        /** The file pipeline, on Jetty's core API (it answers 405 to the methods of its routes it does not serve). */
        FILES,
        /** The order channel's handler, on Jetty's core API. */
        ORDERS,
        /** The webapp proxy (when {@code [webapp] proxy} is set; otherwise Jersey, whose answer is 404). */
        WEBAPP,
        /** The node-facing Jersey application, on a worker. */
        JERSEY,
        /** The admin Jersey application, on a worker. */
        ADMIN
    }

    /**
     * @param method the request method
     * @return who answers it
     */
    public Answerer answerer(String method) {
        if (listener == Listener.ADMIN) {
            return Answerer.ADMIN;
        }
        return switch (this) {
            case WEBAPP, ROOT -> Answerer.WEBAPP;
            case REMOTE_RUN_ORDERS, REMOTE_RUN_ORDER -> Answerer.ORDERS;
            default -> filePipeline.containsKey(method) || filesOnly() ? Answerer.FILES : Answerer.JERSEY;
        };
    }

    /** @return the access rule that decides its requests ({@link Access#decide}) */
    public Rule rule() {
        return switch (this) {
            case POLICIES -> Rule.POLICIES;
            case COMMON -> Rule.COMMON;
            case SHARED_FOLDER -> Rule.SHARED_FOLDER;
            case SHARED_FILES -> Rule.SHARED_FILES;
            case REMOTE_RUN_ORDERS, REMOTE_RUN_ORDER -> Rule.ORDER_CHANNEL;
            case REMOTE_RUN -> Rule.REMOTE_RUN;
            case RELAY_API_DENIED -> Rule.RELAY_API_DENIED;
            case INVENTORIES -> Rule.INVENTORIES;
            case INVENTORY_UPDATES -> Rule.INVENTORY_UPDATES;
            case REPORTS -> Rule.REPORTS;
            case UUID -> Rule.UUID;
            case WHOAMI -> Rule.OPEN;
            case WEBAPP -> Rule.WEBAPP;
            case ROOT -> Rule.WEBAPP_ROOT;
            case SYSTEM, STATUS, HEALTH, READY, METRICS -> Rule.ADMIN;
            case OTHER, ADMIN_OTHER -> Rule.NONE;
        };
    }

    /** @return the listener it lives on */
    public Listener listener() {
        return listener;
    }

    /**
     * @return whether its answers are streams to be written as they are produced (remote run's output), which
     *     must not be buffered to learn their length
     */
    public boolean streamsAnswers() {
        return this == REMOTE_RUN || this == SYSTEM;
    }

    /** @return the upload route it is, or null */
    public UploadKind upload() {
        return switch (this) {
            case INVENTORIES -> UploadKind.INVENTORIES;
            case INVENTORY_UPDATES -> UploadKind.INVENTORY_UPDATES;
            case REPORTS -> UploadKind.REPORTS;
            default -> null;
        };
    }

    /** @return the public path template of a file pipeline route or of the proxied one, or null */
    public String template() {
        return template;
    }

    /**
     * @return the methods passed on to the webapp as they came, when {@code [webapp] proxy} is set (the webapp's
     *     own API uses these; the proxy passes any method on)
     */
    public Set<String> proxiedMethods() {
        return this == WEBAPP ? PROXIED_METHODS : Set.of();
    }

    /** @return the methods the file pipeline answers on this route, each with the query parameters it reads */
    public Map<String, Set<String>> filePipelineOperations() {
        return filePipeline;
    }

    /** @return the class requests of this route are counted under */
    public RouteClass metricClass() {
        return metricClass;
    }

    /**
     * @param method the request method
     * @return whose workers and queue the request uses on the TLS listener: an upload ({@code PUT} of a shared
     *     file) has its own, so that slow bodies never take a download's worker
     */
    public WorkClass work(String method) {
        return this == SHARED_FILES && "PUT".equals(method) ? WorkClass.UPLOADS : work;
    }

    /**
     * @param method the request method
     * @return whether the file pipeline answers it; otherwise Jersey does
     */
    public boolean filePipeline(String method) {
        return filePipeline.containsKey(method);
    }

    /**
     * @return whether the route answers {@code GET} and {@code HEAD} only, all in the file pipeline (any other
     *     method gets 405 there)
     */
    public boolean filesOnly() {
        return filePipeline.containsKey("HEAD");
    }

    /**
     * Where a request goes.
     *
     * @param admin whether it came in on the admin listener
     * @param rawPath its path, percent-encoded as received, or null
     * @return its route
     */
    public static Route of(boolean admin, String rawPath) {
        Listener on = admin ? Listener.ADMIN : Listener.TLS;
        if (rawPath != null) {
            String relative = relayApiRelative(rawPath);
            for (Route route : VALUES) {
                if (route.listener == on && route.path != null && route.matches(route.relayApi ? relative : rawPath)) {
                    return route;
                }
            }
        }
        return admin ? ADMIN_OTHER : OTHER;
    }

    private boolean matches(String candidate) {
        if (candidate == null) {
            return false;
        }
        if (this == ROOT) {
            return candidate.equals(path);
        }
        if (this == WEBAPP) {
            // Rudder's vhost: <Location /rudder/relay-api> ProxyPass ! — relayd's API, known or not, stays ours.
            boolean relayApi = candidate.equals(ALIAS) || candidate.startsWith(ALIAS + "/");
            return !relayApi && (candidate.startsWith(path) || candidate.equals("/rudder"));
        }
        return path.endsWith("/") ? candidate.startsWith(path) : candidate.equals(path);
    }

    /**
     * @param rawPath a request path
     * @return the rest of it after the unversioned {@code /rudder/relay-api} (starting with '/'), or null when it
     *     is not under relayd's API. For {@code /rudder/relay-api/1/...} that rest starts with {@code /1/}, which
     *     no family matches: Apache would proxy it to relayd's {@code /rudder/relay-api/1/1/...}, had its
     *     {@code Location} not denied it first.
     */
    public static String relayApiRelative(String rawPath) {
        if (rawPath.startsWith(ALIAS + "/")) {
            return rawPath.substring(ALIAS.length());
        }
        return null;
    }

    /**
     * @param rawPath a path of this route
     * @return what follows the route's prefix (percent-encoded), or null for an exact route and the catch-alls
     */
    public String below(String rawPath) {
        if (path == null || !path.endsWith("/")) {
            return null;
        }
        String candidate = relayApi ? relayApiRelative(rawPath) : rawPath;
        return candidate.substring(path.length());
    }
}
