package io.pintle.server.cfengine;

import io.pintle.server.access.Access;
import io.pintle.server.access.CfengineRoutes;
import io.pintle.server.access.Credentials;
import io.pintle.server.access.Rule;
import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.http.AccessLine;
import io.pintle.server.metrics.ServerMetrics;
import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.policy.DigestCache;
import io.pintle.server.delivery.Delivery;
import io.pintle.server.delivery.PolicyEntry;
import io.pintle.server.policy.FileVersion;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotHolder;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every connection of CFEngine's door shares: the live snapshot, who a key is, where a requested path is and
 * whether the caller may have it (the one access function, {@link Access#decide}, with the door's
 * {@link CfengineRoutes}), and the access log and metrics. Nothing here outlives a request but the resolved trees
 * of the current snapshot.
 */
public final class CfengineDoor {
    private static final Logger LOG = LoggerFactory.getLogger(CfengineDoor.class);

    private final SnapshotHolder snapshots;
    private final ServerMetrics metrics;
    private final DigestCache digests;
    private final Clock clock;
    private final AtomicReference<Trees> trees = new AtomicReference<>();
    private final AccessLine access = new AccessLine();
    private final AgentRun agentRun;

    /** Runs this server's own agent, as remote run does (its argv, or the root agent helper). */
    @FunctionalInterface
    public interface AgentRun {
        /**
         * @param snapshot the request's snapshot
         * @param conditions the conditions to define ({@code -D}), already checked
         * @param lines receives each line of the agent's output as it comes
         * @return the agent's exit code, or null when it did not run or its end is unknown
         */
        Integer run(ServerSnapshot snapshot, List<String> conditions, java.util.function.Consumer<String> lines);
    }

    /**
     * @param snapshots the live snapshot
     * @param metrics the instance's metrics
     * @param digests computes the digests {@code MD5} compares
     * @param clock the clock ({@code denybadclocks}, the access log)
     * @param agentRun runs this server's agent for {@code EXEC}
     * @param delivery told of each node's requests and of its policy stamp fetches
     */
    private static final String STAMP_NAME = Path.of(PolicyEntry.CFENGINE_STAMP).getFileName().toString();
    private final Delivery delivery;

    public CfengineDoor(SnapshotHolder snapshots, ServerMetrics metrics, DigestCache digests, Clock clock,
            AgentRun agentRun, Delivery delivery) {
        this.agentRun = agentRun;
        this.delivery = delivery;
        this.snapshots = snapshots;
        this.metrics = metrics;
        this.digests = digests;
        this.clock = clock;
    }

    /** @return the snapshot a request runs on: read once per request */
    ServerSnapshot snapshot() {
        return snapshots.current();
    }

    ServerMetrics metrics() {
        return metrics;
    }

    DigestCache digests() {
        return digests;
    }

    Clock clock() {
        return clock;
    }

    AgentRun agentRun() {
        return agentRun;
    }

    /**
     * Who a key is on a snapshot: the node whose pin ({@code nodeslist.json} key-hash or a certificate of the
     * bundles) it is, when exactly one listed node has it and the deny list does not name it.
     *
     * @param snapshot the snapshot
     * @param key the peer's key
     * @return the identification
     */
    public static Identification identify(ServerSnapshot snapshot, RSAPublicKey key) {
        return identify(snapshot, KeyHash.sha256(key), KeyHash.of("sha512", key), CfengineKey.md5(key));
    }

    /**
     * As {@link #identify(ServerSnapshot, RSAPublicKey)}, from the key's pins and name, worked out once per
     * connection.
     *
     * @param snapshot the snapshot
     * @param sha256 the key's sha256 pin
     * @param sha512 its sha512 pin
     * @param name its CFEngine name ({@code MD5=...})
     * @return the identification
     */
    static Identification identify(ServerSnapshot snapshot, KeyHash sha256, KeyHash sha512, String name) {
        Set<KeyHash> denied = snapshot.trust().revocations().denied();
        if (denied.contains(sha256) || denied.contains(sha512)) {
            return new Identification.Anonymous(Identification.Reason.REVOKED,
                    "the key " + name + " is in the deny list");
        }
        Set<NodeId> owners = new TreeSet<>(java.util.Comparator.comparing(NodeId::value));
        owners.addAll(snapshot.nodes().owners(sha256));
        owners.addAll(snapshot.nodes().owners(sha512));
        if (owners.isEmpty()) {
            return new Identification.Anonymous(Identification.Reason.UNKNOWN_KEY, "the key " + name + " ("
                    + sha256 + ") is pinned for no node (nodeslist.json key-hash, node certificates)");
        }
        if (owners.size() > 1) {
            return new Identification.Anonymous(Identification.Reason.PINS_DISAGREE, "the key " + name
                    + " is pinned for several nodes: " + owners);
        }
        NodeId node = owners.iterator().next();
        if (snapshot.nodes().node(node).isEmpty()) {
            return new Identification.Anonymous(Identification.Reason.NODE_NOT_LISTED, "the key " + name
                    + " is the certificate key of node " + node + ", which nodeslist.json does not list");
        }
        return new Identification.Authenticated(node, sha256);
    }

    /**
     * What a path names and whether the caller may have it.
     *
     * @param requested the path as the request names it
     * @param real the resolved path, or null when it is refused or does not exist
     * @param outcome {@code ok}, {@code denied}, {@code missing} or {@code bad}
     * @param decision the access decision (null for {@code bad})
     */
    public record Resolution(String requested, Path real, String outcome, Decision decision) {
        /** @return whether the caller may have it, and it exists */
        public boolean allowed() {
            return real != null && decision instanceof Decision.Allow;
        }
    }

    /**
     * Resolves a path as cf-serverd does (links followed, then the access rules of where it really is) and asks
     * the access function.
     *
     * @param snapshot the request's snapshot
     * @param caller the caller
     * @param command the command, as the access function's method
     * @param requested the path as received
     * @return the resolution
     */
    Resolution resolve(ServerSnapshot snapshot, Caller caller, String command, String requested) {
        return resolve(snapshot, caller, command, requested, trees(snapshot));
    }

    /**
     * As {@link #resolve(ServerSnapshot, Caller, String, String)}, with the door's trees resolved by the caller:
     * what {@code pintle explain} asks.
     *
     * @param snapshot the snapshot
     * @param caller the caller
     * @param command the command
     * @param requested the path as received
     * @param resolved the door's trees, roots resolved ({@link CfengineRoutes#resolve})
     * @return the resolution
     */
    public static Resolution resolve(ServerSnapshot snapshot, Caller caller, String command, String requested,
            List<CfengineRoutes.Tree> resolved) {
        String normal = RequestPath.normalise(requested);
        if (normal == null) {
            LOG.info("refused {} of {} from {}: {}", command, printable(requested),
                    caller.address().getHostAddress(), RequestPath.refusal(requested));
            return new Resolution(requested, null, "denied",
                    new Decision.Deny("path-rejected", RequestPath.refusal(requested)));
        }
        Path lexical = Path.of(normal);
        CfengineRoutes.Target named = CfengineRoutes.route(lexical, resolved);
        NodeId frozen = frozenOwner(snapshot, named);
        if (frozen != null) {
            return resolveFrozen(snapshot, caller, command, requested, named, frozen);
        }
        Path real;
        try {
            real = lexical.toRealPath();
        } catch (NoSuchFileException missing) {
            // Decided on the path as named, for the log only: the agent gets the same refusal either way.
            CfengineRoutes.Target target = CfengineRoutes.route(lexical, resolved);
            Decision decision = decide(snapshot, caller, command, target);
            return new Resolution(requested, null, decision instanceof Decision.Allow ? "missing" : "denied",
                    decision instanceof Decision.Allow ? new Decision.Deny("no-such-file", "no such file")
                            : decision);
        } catch (IOException | SecurityException unreadable) {
            return new Resolution(requested, null, "denied",
                    new Decision.Deny("unreadable", "cannot resolve the path: " + unreadable.getClass().getSimpleName()));
        }
        CfengineRoutes.Target target = CfengineRoutes.route(real, resolved);
        Decision decision = decide(snapshot, caller, command, target);
        if (decision instanceof Decision.Deny && !real.equals(lexical) && target.tree() == null) {
            LOG.info("refused {} of {} from {}: it resolves to {}, outside every tree this door serves", command,
                    printable(requested), caller.address().getHostAddress(), real);
        }
        return new Resolution(requested, decision instanceof Decision.Allow ? real : null,
                decision instanceof Decision.Allow ? "ok" : "denied", decision);
    }

    /** @return the node whose directory in the share the path names, when that node is frozen; else null */
    private static NodeId frozenOwner(ServerSnapshot snapshot, CfengineRoutes.Target named) {
        if (!snapshot.freeze().active() || named.tree() == null || !"share".equals(named.tree().name())) {
            return null;
        }
        NodeId owner = Access.owner(named.below());
        return owner != null && snapshot.freeze().covers(owner) ? owner : null;
    }

    /**
     * A frozen node's path: decided as named in the share (the same rule as any node path), served from the
     * frozen copy, links resolved within that copy and refused when they leave it.
     */
    private static Resolution resolveFrozen(ServerSnapshot snapshot, Caller caller, String command, String requested,
            CfengineRoutes.Target named, NodeId owner) {
        Decision decision = decide(snapshot, caller, command, named);
        if (!(decision instanceof Decision.Allow)) {
            return new Resolution(requested, null, "denied", decision);
        }
        String below = named.below();
        int slash = below.indexOf('/');
        Path copy = snapshot.freeze().root(owner);
        try {
            Path copyReal = copy.toRealPath();
            Path real = (slash < 0 ? copy : copy.resolve(below.substring(slash + 1))).toRealPath();
            if (!real.startsWith(copyReal)) {
                LOG.info("refused {} of {} from {}: in node {}'s frozen copy it resolves to {}, outside it", command,
                        printable(requested), caller.address().getHostAddress(), owner.value(), real);
                return new Resolution(requested, null, "denied",
                        new Decision.Deny("path-rejected", "a link leaves the frozen copy"));
            }
            return new Resolution(requested, real, "ok", decision);
        } catch (NoSuchFileException missing) {
            return new Resolution(requested, null, "missing", new Decision.Deny("no-such-file", "no such file"));
        } catch (IOException | SecurityException unreadable) {
            return new Resolution(requested, null, "denied",
                    new Decision.Deny("unreadable", "cannot resolve the path: " + unreadable.getClass().getSimpleName()));
        }
    }

    private static Decision decide(ServerSnapshot snapshot, Caller caller, String command,
            CfengineRoutes.Target target) {
        if (target.rule() == Rule.NONE) {
            return new Decision.Deny("not-granted", target.tree() == null
                    ? "not in a tree cf-serverd.st grants (share/<uuid>, shared-files/<uuid>, masterfiles, ncf, "
                            + "the shared folder)"
                    : "ncf's " + CfengineRoutes.NCF_TECHNIQUES + " is denied to everyone (cf-serverd.st)");
        }
        return Access.decide(target.rule(), command, target.below(), snapshot, caller, null, Credentials.NONE);
    }

    /** The door's trees on a snapshot, roots resolved once per snapshot. */
    private List<CfengineRoutes.Tree> trees(ServerSnapshot snapshot) {
        Trees known = trees.get();
        if (known != null && known.generation() == snapshot.generation()) {
            return known.trees();
        }
        Trees fresh = new Trees(snapshot.generation(),
                CfengineRoutes.resolve(CfengineRoutes.trees(snapshot.config())));
        trees.set(fresh);
        return fresh.trees();
    }

    private record Trees(long generation, List<CfengineRoutes.Tree> trees) {}

    /**
     * Tells the delivery state that a node now holds its policy stamp ({@link PolicyEntry#CFENGINE_STAMP}): it
     * was sent the file whole (200) or its digest matched (304). Any other path is not a fetch of its policies.
     *
     * @param snapshot the request's snapshot
     * @param caller who asked
     * @param resolution the path, resolved and allowed
     * @param status 200 or 304
     */
    void delivered(ServerSnapshot snapshot, Caller caller, Resolution resolution, int status) {
        if (!(caller.identification() instanceof Identification.Authenticated authenticated)
                || !resolution.real().endsWith(STAMP_NAME)) {
            return;
        }
        NodeId node = authenticated.node();
        try {
            Path root = snapshot.nodeRoot(node).toRealPath();
            if (!resolution.real().equals(root.resolve(PolicyEntry.CFENGINE_STAMP))) {
                return;
            }
            delivery.fetched(snapshot, node, PolicyEntry.CFENGINE_STAMP,
                    FileVersion.of(resolution.real()).etag(), status, "cfengine");
        } catch (IOException gone) {
            // Replaced since it was sent: the next fetch will say what the node holds.
        }
    }

    /**
     * Counts a request and writes its access log line ({@code proto=cfengine}).
     *
     * @param snapshot the request's snapshot
     * @param client the peer's address
     * @param caller who it is, or null before identification
     * @param key the peer key's digest
     * @param command the command
     * @param path the path as requested, or null
     * @param outcome ok, denied, missing, bad or failed
     * @param decision the decision, or null
     * @param bytes file bytes sent
     * @param nanos how long it took
     */
    void log(ServerSnapshot snapshot, InetAddress client, Caller caller, String key, String command, String path,
            String outcome, Decision decision, long bytes, long nanos) {
        metrics.cfengineRequest(command, outcome, bytes);
        if (decision instanceof Decision.Deny deny) {
            metrics.denied(deny.reason());
        }
        int status = switch (outcome) {
            case "ok" -> 200;
            case "denied" -> 403;
            case "missing" -> 404;
            case "bad" -> 400;
            default -> 500;
        };
        NodeId authenticated = caller != null && caller.identification() instanceof Identification.Authenticated a
                ? a.node() : null;
        if (authenticated != null) {
            delivery.request(authenticated, client.getHostAddress(), "cfengine", status);
        }
        ServerConfig.Log log = snapshot.config().log();
        if (!log.access() || !AccessLine.enabled()) {
            return;
        }
        String node = authenticated != null ? authenticated.value() : null;
        long millis = clock.millis();
        boolean json = log.accessFormat() == ServerConfig.AccessFormat.JSON;
        // A path is at most a transaction (4,088 bytes); the line keeps its first 512 characters.
        String shown = path != null && path.length() > 512 ? path.substring(0, 512) + "..." : path;
        access.write(new AccessLine.Line(json ? Instant.ofEpochMilli(millis).toString() : null,
                client.getHostAddress(), node, command, shown, null, "CFEngine", status, bytes, nanos / 1_000_000.0,
                CfengineListener.CONNECTOR, null,
                decision instanceof Decision.Allow ? "allowed" : decision instanceof Decision.Deny ? "denied" : null,
                decision instanceof Decision.Deny deny ? deny.reason() : null,
                decision instanceof Decision.Allow allow ? allow.rule() : null, null, null, "cfengine",
                key != null ? key : json ? null : "-"), millis, nanos, json);
    }

    /** Paths come from the network: escaped as the access line escapes them, the first 512 characters. */
    static String printable(String value) {
        if (value == null) {
            return "-";
        }
        StringBuilder text = new StringBuilder(Math.min(value.length(), 512) + 3);
        AccessLine.quoted(text, value.length() > 512 ? value.substring(0, 512) : value);
        if (value.length() > 512) {
            text.append("...");
        }
        return text.toString();
    }
}
