package io.pintle.api;

/**
 * URL prefixes served on the node-facing TLS listener. The first three are Rudder's (they must behave as
 * Rudder's Apache vhost does); the {@code /v1} ones are Pintle's own.
 */
public final class Routes {
    /** {@code /policies/{nodeId}/{path}}: a node's own policies, under {@code {share}/{nodeId}}. */
    public static final String POLICIES = "/policies";

    /** {@code /common/{path}}: the policy library shared by all nodes, under {@code {share}/common}. */
    public static final String COMMON = "/common";

    /** {@code /uuid}: the server's own node id, as plain text. */
    public static final String UUID = "/uuid";

    /** {@code /v1/whoami}: how the server sees the caller; the entry point for debugging with curl. */
    public static final String WHOAMI = "/v1/whoami";

    /** Admin listener: the nodes this server serves and what each last fetched. */
    public static final String NODES = "/v1/nodes";

    /** Admin listener: the freeze in force; POST takes one, DELETE releases it. */
    public static final String FREEZE = "/v1/freeze";

    /** Admin listener: the delivery curve. */
    public static final String DELIVERY = "/v1/delivery";

    /** {@code GET /v1/nodes}: only nodes behind ({@code true}) or on what is served now ({@code false}). */
    public static final String BEHIND = "behind";

    /** {@code GET /v1/nodes}: only nodes silent for at least this many seconds (never seen included). */
    public static final String SILENT_FOR = "silent_for";

    /**
     * relayd's API, versioned, as relayd serves it on 127.0.0.1:3030: {@code /rudder/relay-api/1/...}. Served on
     * the admin listener only; on the TLS listener it is refused, as Rudder's Apache refuses it (it only proxies
     * {@link #RELAY_API_ALIAS} and denies the rest of {@code /rudder/relay-api/}).
     */
    public static final String RELAY_API = "/rudder/relay-api/1";

    /**
     * relayd's API as Rudder's Apache exposes it to nodes ({@code ProxyPass /rudder/relay-api/ .../1/}): the only
     * form the TLS listener serves ({@link #SHARED_FOLDER}, {@link #SHARED_FILES}, {@link #REMOTE_RUN}), and what a
     * Pintle calling another Pintle's TLS listener uses. The admin listener accepts it too.
     */
    public static final String RELAY_API_ALIAS = "/rudder/relay-api";

    /** {@code <relay api>/shared-folder/{path}}: Rudder's global shared folder (GET, HEAD with {@code hash}). */
    public static final String SHARED_FOLDER = "/shared-folder";

    /**
     * {@code <relay api>/shared-files/{target}/{source}/{fileId}}: node-to-node shared files (PUT with {@code ttl},
     * HEAD with {@code hash}, and Pintle's GET for the target node).
     */
    public static final String SHARED_FILES = "/shared-files";

    /** Query parameter of the shared-files PUT: how long the file is kept (seconds, or {@code 1d}, {@code 3 hours}). */
    public static final String TTL = "ttl";

    /** Query parameters of relayd's shared-folder HEAD: the client's hash (hex) and its type. */
    public static final String HASH = "hash";

    /** {@code sha256} (default) or {@code sha512}. */
    public static final String HASH_TYPE = "hash_type";

    /** Query parameter choosing another view of a directory URL: {@link #VIEW_MANIFEST} or {@link #VIEW_ARCHIVE}. */
    public static final String VIEW = "view";

    /** {@code <directory URL>/?view=manifest}: the recursive {@link io.pintle.api.dto.Manifest} (JSON). */
    public static final String VIEW_MANIFEST = "manifest";

    /** {@code <directory URL>/?view=archive}: a streamed {@code tar.gz} of exactly one manifest version. */
    public static final String VIEW_ARCHIVE = "archive";

    /**
     * Query parameter {@code since=<etag>} of {@link #VIEW_MANIFEST}: only the top-level entries changed since that
     * version (a change list, see {@link io.pintle.api.dto.Manifest}); empty, or a version the server no longer
     * knows, gives the whole manifest. Either way the server remembers the version it answered, so that the next
     * {@code since} can name it.
     */
    public static final String SINCE = "since";

    /**
     * Query parameter {@code only=<name>} of {@link #VIEW_ARCHIVE}, repeated: an archive of just these top-level
     * directories of the tree, each whole and of one version of its own, one after the other in name order; names
     * that are not a directory there are left out. At most {@link #MAX_ONLY} names.
     */
    public static final String ONLY = "only";

    /** Most {@link #ONLY} names in one request. */
    public static final int MAX_ONLY = 64;

    /**
     * Query parameter {@code wait=SECONDS}: with {@code If-None-Match} on a file, manifest or archive URL, the
     * answer waits until the ETag differs (200) or the time is up (304).
     */
    public static final String WAIT = "wait";

    /** Longest accepted {@link #WAIT}, in seconds. */
    public static final int MAX_WAIT_SECONDS = 300;

    /**
     * {@code <relay api>/remote-run/...}: relayd's remote run ({@code nodes/{id}}, {@code nodes}, {@code all}),
     * POST with relayd's form or Pintle's JSON {@link io.pintle.api.dto.RemoteRunRequest}.
     */
    public static final String REMOTE_RUN = "/remote-run";

    /** {@code <relay api>/remote-run/nodes/{id}}: one node. */
    public static final String REMOTE_RUN_NODE = REMOTE_RUN + "/nodes/{id}";

    /** {@code <relay api>/remote-run/nodes}: the nodes of the form's {@code nodes} field (or the JSON's). */
    public static final String REMOTE_RUN_NODES = REMOTE_RUN + "/nodes";

    /** {@code <relay api>/remote-run/all}: every node below this server, and itself. */
    public static final String REMOTE_RUN_ALL = REMOTE_RUN + "/all";

    /**
     * {@code /rudder/relay-api/remote-run/orders}, TLS listener only (Pintle's, not relayd's): the pull channel. A
     * node that accepts no inbound connection holds {@code GET ...?wait=N} with its agent certificate; the answer
     * is one order, {@code text/plain}: {@code <order> <command>[ <conditions>]}, or 204 when the wait ran out.
     */
    public static final String REMOTE_RUN_ORDERS = REMOTE_RUN + "/orders";

    /**
     * {@code /rudder/relay-api/remote-run/orders/{order}}: {@code PUT} of the agent's output for that order, then
     * an empty line and {@code <order> exit <code>}, as the agent helper frames it.
     */
    public static final String REMOTE_RUN_ORDER = REMOTE_RUN_ORDERS + "/{order}";

    /** On an order: the seconds its agent may run (the server's {@code [remote_run] timeout}). */
    public static final String RUN_TIMEOUT_HEADER = "Pintle-Run-Timeout";

    /** relayd's form fields: whether to answer before the runs end, and whether to send their output. */
    public static final String FORM_ASYNCHRONOUS = "asynchronous";

    /** See {@link #FORM_ASYNCHRONOUS}. */
    public static final String FORM_KEEP_OUTPUT = "keep_output";

    /** relayd's form field: comma-separated conditions (CFEngine classes) defined for the run. */
    public static final String FORM_CONDITIONS = "conditions";

    /** The deprecated name of {@link #FORM_CONDITIONS}, still accepted. */
    public static final String FORM_CLASSES = "classes";

    /** relayd's form field of {@link #REMOTE_RUN_NODES}: comma-separated node ids. */
    public static final String FORM_NODES = "nodes";

    /**
     * Request header between Pintle servers: how many servers the run has already crossed. A server refuses a run
     * that has crossed {@link #MAX_REMOTE_RUN_HOPS}, so that disagreeing node lists cannot make runs loop.
     */
    public static final String REMOTE_RUN_HOPS_HEADER = "Pintle-Remote-Run-Hops";

    /**
     * Response header of {@code POST /rudder/relay-api/1/system/reload}: the generation live after the reload. The
     * body stays relayd's exact string, which {@code rudder relay reload} compares whole.
     */
    public static final String RELOAD_GENERATION_HEADER = "Pintle-Generation";

    /** Response header of the reload: {@code applied}, {@code unchanged} or {@code failed}. */
    public static final String RELOAD_OUTCOME_HEADER = "Pintle-Reload-Outcome";

    /** relayd's limit on the depth of the relay tree (policy-server links followed). */
    public static final int MAX_REMOTE_RUN_HOPS = 20;

    /** Node ids as Rudder's Apache configuration accepts them in URLs. */
    public static final String NODE_ID_PATTERN = "[a-zA-Z0-9_-]+";

    private Routes() {}
}
