package io.pintle.server.access;

import io.pintle.api.Routes;
import io.pintle.server.acl.AclEvaluator;
import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.uploads.UploadNames;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.util.regex.Pattern;

/**
 * The one access decision: may this caller do this to this path? Every door asks it here, of the snapshot its
 * request runs on: the file pipeline, the order channel, the webapp proxy and Jersey's resources on the HTTPS
 * listener, and {@code pintle explain} with the very same arguments. The rules themselves are Rudder's vhost's,
 * in {@link AclEvaluator}; this picks the one a {@link Rule} names and reads from the path what it needs.
 *
 * <p>Pure: no I/O but the login check's hash, no state; a decision on an old snapshot stays that snapshot's.
 */
public final class Access {
    private static final Pattern NODE_ID = Pattern.compile(Routes.NODE_ID_PATTERN);
    /**
     * The webapp's legacy API paths Rudder's vhost keeps to this machine ({@code Require local}): {@code <LocationMatch
     * "^/rudder/api/(status|archives)$">} and {@code <LocationMatch "^/rudder/api/(techniqueLibrary|dyngroup|deploy)/reload$">}.
     */
    private static final Pattern LOCAL_API =
            Pattern.compile("/rudder/api/(status|archives|(techniqueLibrary|dyngroup|deploy)/reload)");
    private static final Pattern SLASHES = Pattern.compile("/{2,}");
    /** Below the admin listener's {@code /rudder/relay-api/}: relayd's remote run, versioned or not. */
    private static final Pattern ADMIN_REMOTE_RUN = Pattern.compile("(1/)?remote-run(/.*)?");

    private Access() {}

    /**
     * @param rule the rule the request's route or door names
     * @param method the request method
     * @param below the path below the route's prefix, percent-encoded as received (null for an exact route); for
     *     {@link Rule#RUN_COMMAND}, the caller's key pin ({@code sha256//...}); for
     *     {@link Rule#WEBAPP}, the whole path decoded and made canonical, as Apache matches {@code <LocationMatch>},
     *     or null when it cannot be made canonical
     * @param snapshot the snapshot the request runs on
     * @param caller address and identification on that snapshot; null on the admin listener
     * @param leaf the client's leaf certificate, or null when it sent none
     * @param credentials what the request carries for the rules
     * @return the decision
     */
    public static Decision decide(Rule rule, String method, String below, ServerSnapshot snapshot, Caller caller,
            X509Certificate leaf, Credentials credentials) {
        AclEvaluator acl = snapshot.acl();
        ServerConfig config = snapshot.config();
        return switch (rule) {
            case POLICIES -> {
                NodeId owner = owner(below);
                if (owner != null) {
                    yield acl.policies(caller, owner);
                }
                int slash = below == null ? -1 : below.indexOf('/');
                yield slash < 0 || !NODE_ID.matcher(below.substring(0, slash)).matches()
                        ? Decision.Deny.absent("no-such-route", "no such route")
                        : Decision.Deny.absent("no-such-node", "no such node directory");
            }
            case COMMON -> acl.common(caller);
            case SHARED_FOLDER -> acl.sharedFolder(caller);
            case SHARED_FILES -> "GET".equals(method) ? sharedFileDownload(acl, caller, below)
                    : acl.sharedFilesUpload(caller);
            case INVENTORIES, INVENTORY_UPDATES, REPORTS -> upload(rule.upload(), method, below, snapshot, caller,
                    credentials);
            case ORDER_CHANNEL -> {
                NodeId policyServer = null;
                if (caller.identification() instanceof Identification.Authenticated authenticated) {
                    policyServer = snapshot.nodes().node(authenticated.node()).map(Node::policyServer).orElse(null);
                }
                yield acl.orderChannel(caller, config.remoteRun().enabled(), policyServer, snapshot.self());
            }
            case REMOTE_RUN -> AclEvaluator.remoteRun(config.remoteRun().enabled(),
                    config.general().role() != ServerConfig.Role.NODE, caller.address(), leaf,
                    snapshot.upstreamPin(), snapshot.policyServerNetworks());
            case UUID -> acl.uuid(caller);
            case OPEN -> new Decision.Allow("open to any caller");
            case RELAY_API_DENIED -> new Decision.Deny("relay-api-denied", "the TLS listener serves relayd's API as "
                    + "Rudder's Apache exposes it: " + Routes.RELAY_API_ALIAS + "/{shared-folder,shared-files,"
                    + "remote-run}/...; the rest of " + Routes.RELAY_API_ALIAS + "/, " + Routes.RELAY_API
                    + "/... included, is refused (relayd's versioned paths and system/ are on the admin listener)");
            case WEBAPP -> webapp(config, caller, below, credentials);
            case WEBAPP_ROOT -> config.webapp().enabled()
                    ? new Decision.Allow("webapp: / redirected to /rudder, as Rudder's webapp vhost")
                    : Decision.Deny.absent("no-such-route", "no such route");
            case ADMIN -> below != null && ADMIN_REMOTE_RUN.matcher(below).matches()
                    && !config.remoteRun().enabled()
                    ? new Decision.Deny("remote-run-disabled", "remote run is disabled on this server ([remote_run] "
                            + "enabled = false)")
                    : new Decision.Allow("admin listener: this machine only");
            case NODE_TREE -> {
                NodeId owner = treeOwner(below);
                yield owner != null ? acl.nodeTree(caller, owner)
                        : Decision.Deny.absent("no-such-node", "no node directory in the path (cf-serverd grants "
                                + "each node's directory, never the directory above them)");
            }
            case LIBRARY -> acl.library(caller);
            case RUN_COMMAND -> acl.runCommand(caller, config.remoteRun().enabled(), KeyHash.parse(below).orElse(null),
                    snapshot.upstreamPin(), snapshot.credentials().keyHash());
            case NONE -> Decision.Deny.absent("no-such-route", "no such route");
        };
    }

    /**
     * @param below a path below {@code share/} or {@code shared-files/}, the node's directory first
     * @return the node whose directory it names, or null when it names none
     */
    private static NodeId treeOwner(String below) {
        if (below == null || below.isEmpty()) {
            return null;
        }
        int slash = below.indexOf('/');
        return nodeId(slash < 0 ? below : below.substring(0, slash));
    }

    /**
     * @param below the path below {@code /policies/}
     * @return the node whose directory it names, or null when it names none (no id, or not a node id)
     */
    public static NodeId owner(String below) {
        int slash = below == null ? -1 : below.indexOf('/');
        return slash < 0 ? null : nodeId(below.substring(0, slash));
    }

    /** @return the node a path segment names, or null when it is not a node id */
    private static NodeId nodeId(String segment) {
        if (!NODE_ID.matcher(segment).matches()) {
            return null;
        }
        try {
            return new NodeId(segment);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** @return a percent-encoded path segment decoded as Jetty's URIUtil.decodePath does: '+' is a plus, not a space */
    private static String decode(String segment) {
        return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static Decision sharedFileDownload(AclEvaluator acl, Caller caller, String below) {
        String[] parts = below == null ? new String[0] : below.split("/", -1);
        if (parts.length != 3) {
            return Decision.Deny.absent("no-such-route", "no such route");
        }
        NodeId target;
        try {
            target = new NodeId(decode(parts[0]));
        } catch (IllegalArgumentException e) {
            return Decision.Deny.absent("bad-id", "invalid target: " + e.getMessage());
        }
        return acl.sharedFilesDownload(caller, target);
    }

    private static Decision upload(UploadKind kind, String method, String below, ServerSnapshot snapshot,
            Caller caller, Credentials credentials) {
        ServerConfig.Uploads uploads = snapshot.config().uploads();
        if (!uploads.enabled()) {
            // A server that takes no uploads (a node) has no such routes: 404, whatever the method.
            return Decision.Deny.absent("uploads-disabled", "this server takes no uploads ([uploads] enabled = "
                    + "false)");
        }
        if (!"PUT".equals(method)) {
            // Apache's <LimitExcept PUT> Require all denied: nothing can list, read or remove what agents sent.
            return new Decision.Deny("method-not-allowed", "only PUT is accepted on " + kind.prefix()
                    + " (Rudder's Apache: LimitExcept PUT)");
        }
        Decision relay = relayForwards(kind, below, snapshot, caller, credentials.authorization());
        if (relay != null) {
            return relay;
        }
        String usersFile = uploads.users(kind).getFileName().toString();
        return snapshot.acl().upload(caller, credentials.logins().guard(snapshot.uploadUsers().of(kind), usersFile),
                usersFile, credentials.authorization());
    }

    /**
     * A relay forwarding its nodes' uploads with its own certificate (Pintle's forwarding, instead of relayd's WebDAV
     * password): a caller authenticated as a node, from an allowed network, may upload a report or an inventory
     * update of a node below it in {@code nodeslist.json} (itself included), and any first inventory (the route of
     * Rudder's well-known initial password). Anything else falls to Rudder's rule (credentials), so an agent with
     * its certificate and its DAV password is not refused here. Without credentials, a node's file that is not
     * below the caller is refused for good ({@code not-below-relay}): no password would make it the caller's.
     *
     * @return the decision, or null when this rule does not apply
     */
    private static Decision relayForwards(UploadKind kind, String below, ServerSnapshot snapshot, Caller caller,
            String authorization) {
        if (caller == null || !(caller.identification() instanceof Identification.Authenticated authenticated)
                || !snapshot.acl().inAllowedNetworks(caller)) {
            return null;
        }
        NodeId relay = authenticated.node();
        if (kind == UploadKind.INVENTORIES) {
            return new Decision.Allow("uploads: a first inventory forwarded by node " + relay + " (its certificate)");
        }
        NodeId node;
        try {
            node = below == null ? null : UploadNames.node(kind, decode(below));
        } catch (IllegalArgumentException badEscape) {
            return null; // names no node: Rudder's rule decides, and the upload refuses the name
        }
        if (node == null) {
            return null;
        }
        if (!snapshot.nodes().isWithin(node, relay)) {
            return authorization != null ? null : new Decision.Deny("not-below-relay", "node " + node + " is not "
                    + relay + " nor below it in nodeslist.json: its " + kind.label() + " are not " + relay
                    + "'s to forward");
        }
        return new Decision.Allow("uploads: " + kind.label() + " of node " + node + " forwarded by "
                + (node.equals(relay) ? "itself" : "its relay " + relay) + " (its certificate)");
    }

    private static Decision webapp(ServerConfig config, Caller caller, String below, Credentials credentials) {
        if (!config.webapp().enabled()) {
            return Decision.Deny.absent("no-such-route", "no such route: [webapp] proxy is not set");
        }
        // Apache matches <LocationMatch> on the decoded, normalised path; one that cannot be made canonical is held
        // to the rule too.
        if (below == null || LOCAL_API.matcher(SLASHES.matcher(below).replaceAll("/")).matches()) {
            return AclEvaluator.webappLocalApi(caller.address(), credentials.apiVersion());
        }
        // No rule of Pintle's: Rudder's vhost grants /rudder to all (<Proxy ...> Require all granted), the webapp
        // authenticates its users.
        return new Decision.Allow("webapp: proxied to " + config.webapp().proxy());
    }
}
