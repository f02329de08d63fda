package io.pintle.server.acl;

import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.nodes.NodeTrust;
import io.pintle.server.uploads.PasswordCheck;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.util.Base64;

/**
 * The access rules of Rudder's node-facing Apache vhost, as pure functions of the caller and the snapshot's
 * allowed networks.
 *
 * <ul>
 *   <li>{@code /policies/{id}/...}: the source address is in the allowed networks, the client certificate
 *       authenticates a known node, and that node is {@code {id}}.
 *   <li>{@code /common/...}: the source address is in the allowed networks (and, in certificate-validation mode, the
 *       client certificate is verified, as Rudder's vhost has it in that mode).
 *   <li>relayd's {@code shared-folder/...}: the source address is in the allowed networks and the client
 *       certificate authenticates a known node (any node).
 *   <li>uploads ({@code PUT /inventories/}, {@code /inventory-updates/}, {@code /reports/}): the source address is
 *       in the allowed networks and the request carries HTTP Basic credentials of a user of the route's password
 *       file, or in certificate-validation mode a client certificate signed by the CA (see {@link #upload}).
 *   <li>relayd's {@code remote-run/...} on the TLS listener: the client's key is this server's policy server's,
 *       or, on a root or a relay, the caller is on this machine or, without a certificate, in the policy-server
 *       networks file (see {@link #remoteRun(boolean, boolean, InetAddress, X509Certificate, KeyHash,
 *       PolicyServerNetworks)}).
 * </ul>
 */
public final class AclEvaluator {
    /** The realm of Rudder's WebDAV uploads ({@code AuthName "WebDAV Storage"}). */
    public static final String UPLOAD_REALM = "WebDAV Storage";
    private static final String BASIC = "Basic ";

    private final AllowedNetworks networks;
    private final NodeTrust trust;

    /**
     * @param networks the allowed networks of the current snapshot
     */
    public AclEvaluator(AllowedNetworks networks) {
        this(networks, NodeTrust.PINNING);
    }

    /**
     * @param networks the allowed networks of the current snapshot
     * @param trust its trust modes: in certificate-validation mode, Apache also asks a verified certificate for
     *     {@code /common}, shared-files and uploads
     */
    public AclEvaluator(AllowedNetworks networks, NodeTrust trust) {
        this.networks = networks;
        this.trust = trust;
    }

    /**
     * Rudder's vhost in certificate-validation mode ({@code Require expr "%{SSL_CLIENT_VERIFY} == 'SUCCESS'"}):
     * the client certificate authenticates a node, or its chain leads to the CA and nothing revokes it (a node
     * not accepted yet). Only when certificate validation is the one mode on.
     *
     * @return the refusal, or null when the certificate is verified or the rule does not apply
     */
    private Decision unverified(Caller caller, String what) {
        // With pinning on too (a migration), pinning's rules hold: agents not migrated yet, and new ones, still
        // need /uuid and /common without a CA-signed certificate.
        if (!trust.validation() || trust.pinning()
                || caller.identification() instanceof Identification.Authenticated) {
            return null;
        }
        Identification.Anonymous anonymous = (Identification.Anonymous) caller.identification();
        if (anonymous.verified() != null) {
            return null;
        }
        return new Decision.Deny(anonymous.reason().code(), what + " needs a verified client certificate in "
                + "certificate-validation mode: " + anonymous.detail());
    }

    /**
     * @param caller the caller
     * @param owner the node whose policy directory is requested
     * @return the decision
     */
    public Decision policies(Caller caller, NodeId owner) {
        Decision refused = notTheOwner(caller, owner, "uid-mismatch", "certificate UID %s does not match the node %s "
                + "in the path");
        return refused != null ? refused : new Decision.Allow("policies: node " + owner + " reads its own directory");
    }

    /**
     * CFEngine's door, as {@code cf-serverd.st} grants {@code /var/rudder/share/<uuid>/} and
     * {@code /var/rudder/shared-files/<uuid>/}: that node's key only ({@code admit_keys}), from an allowed network
     * ({@code allowconnects}).
     *
     * @param caller the caller, identified by its key
     * @param owner the node whose directory is asked for
     * @return the decision
     */
    public Decision nodeTree(Caller caller, NodeId owner) {
        Decision refused = notTheOwner(caller, owner, "key-mismatch", "the key of node %s is not the key of the node "
                + "%s whose directory this is");
        return refused != null ? refused
                : new Decision.Allow("cfengine: node " + owner + " reads its own directory (admit_keys)");
    }

    /**
     * A node's own directory, whichever door: an allowed network, an identified node, that node.
     *
     * @param mismatch the reason when another node asks
     * @param detail its words: the caller's node, then the owner ({@code %s} twice)
     * @return the refusal, or null when the caller is the owner
     */
    private Decision notTheOwner(Caller caller, NodeId owner, String mismatch, String detail) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        if (caller.identification() instanceof Identification.Anonymous anonymous) {
            return new Decision.Deny(anonymous.reason().code(), anonymous.detail());
        }
        NodeId node = ((Identification.Authenticated) caller.identification()).node();
        return node.equals(owner) ? null : new Decision.Deny(mismatch, String.format(detail, node, owner));
    }

    /**
     * CFEngine's {@code EXEC} (cf-runagent), as {@code cf-serverd.st} grants {@code ${g.rudder_command}}: the key of
     * this server's policy server ({@code admit_keys => {"&POLICY_SERVER_KEY&"}}); on a root, its own policy
     * server, this server's own key. From an allowed network, and only while remote run is enabled.
     *
     * @param caller the caller
     * @param enabled whether remote run is enabled ({@code [remote_run] enabled})
     * @param key the caller's key pin
     * @param policyServer the policy server's pin, or null on a root
     * @param self this server's own key pin
     * @return the decision
     */
    public Decision runCommand(Caller caller, boolean enabled, KeyHash key, KeyHash policyServer, KeyHash self) {
        if (!enabled) {
            return new Decision.Deny("remote-run-disabled", "remote run is disabled on this server ([remote_run] "
                    + "enabled = false)");
        }
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        if (key != null && policyServer != null && key.equals(policyServer)) {
            return new Decision.Allow("cfruncommand: the policy server's key (admit_keys)");
        }
        if (key != null && policyServer == null && key.equals(self)) {
            return new Decision.Allow("cfruncommand: this root's own key, its own policy server (admit_keys)");
        }
        return new Decision.Deny("not-policy-server", "only the policy server's key may run this server's agent "
                + "(cf-serverd.st: admit_keys => POLICY_SERVER_KEY for the rudder command)");
    }

    /**
     * CFEngine's door, as {@code cf-serverd.st} grants the initial policies, ncf and the shared folder: the allowed
     * networks ({@code admit_ips => @{def.acl}}), whatever the key, so that a new node bootstraps.
     *
     * @param caller the caller
     * @return the decision
     */
    public Decision library(Caller caller) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        return new Decision.Allow("cfengine: allowed network (admit_ips)");
    }

    /**
     * @param caller the caller
     * @return the decision
     */
    public Decision common(Caller caller) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        Decision refused = unverified(caller, "/common");
        if (refused != null) {
            return refused;
        }
        return new Decision.Allow(trust.validation() && !trust.pinning()
                ? "common: verified certificate in an allowed network" : "common: allowed network");
    }

    /**
     * {@code /uuid}: public, as Rudder's vhost has it, except in certificate-validation mode, where that vhost asks
     * a verified certificate for it too.
     *
     * @param caller the caller
     * @return the decision
     */
    public Decision uuid(Caller caller) {
        Decision refused = unverified(caller, "/uuid");
        return refused != null ? refused : new Decision.Allow(trust.validation() && !trust.pinning()
                ? "uuid: verified certificate" : "uuid: public");
    }

    /**
     * Rudder's Apache: a verified client certificate and an allowed network.
     *
     * @param caller the caller
     * @return the decision
     */
    public Decision sharedFolder(Caller caller) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        if (caller.identification() instanceof Identification.Anonymous anonymous) {
            return new Decision.Deny(anonymous.reason().code(), anonymous.detail());
        }
        NodeId node = ((Identification.Authenticated) caller.identification()).node();
        return new Decision.Allow("shared-folder: node " + node + " in an allowed network");
    }

    /**
     * relayd's shared-files PUT and HEAD: an allowed network (the upload carries its own signature, checked against
     * the source node's pinned key).
     *
     * @param caller the caller
     * @return the decision
     */
    public Decision sharedFilesUpload(Caller caller) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        Decision refused = unverified(caller, "shared-files");
        if (refused != null) {
            return refused;
        }
        return new Decision.Allow("shared-files: allowed network; the upload is checked by its signature");
    }

    /**
     * Pintle's shared-files GET: only the target node, by its own certificate, from an allowed network.
     *
     * @param caller the caller
     * @param target the node the file is for
     * @return the decision
     */
    public Decision sharedFilesDownload(Caller caller, NodeId target) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        if (caller.identification() instanceof Identification.Anonymous anonymous) {
            return new Decision.Deny(anonymous.reason().code(), anonymous.detail());
        }
        NodeId node = ((Identification.Authenticated) caller.identification()).node();
        if (!node.equals(target)) {
            return new Decision.Deny("uid-mismatch",
                    "certificate UID " + node + " is not the node " + target + " this file is for");
        }
        return new Decision.Allow("shared-files: node " + node + " reads a file shared with it");
    }

    /**
     * Rudder's Apache for its WebDAV uploads: {@code Require valid-user} (HTTP Basic against the route's
     * {@code AuthUserFile}) and an allowed network, both.
     *
     * @param caller the caller
     * @param users the route's password file, parsed (guarded by the login throttle when a request asks)
     * @param usersFile its name, for the refusal's detail
     * @param authorization the request's {@code Authorization} header, or null
     * @return the decision; a refusal for want of credentials carries the realm to ask them for (401)
     */
    public Decision upload(Caller caller, PasswordCheck users, String usersFile, String authorization) {
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        if (trust.validation()) {
            // Rudder's vhost in certificate-validation mode: the verified certificate instead of Basic. With key
            // pinning on too (a migration), agents not migrated yet still upload with their DAV credentials.
            Identification identification = caller.identification();
            if (identification instanceof Identification.Authenticated authenticated
                    && authenticated.via() == NodeTrust.Mode.CERT_VALIDATION) {
                return new Decision.Allow("uploads: node " + authenticated.node() + " by its CA-signed certificate, in "
                        + "an allowed network");
            }
            if (identification instanceof Identification.Anonymous anonymous && anonymous.verified() != null) {
                return new Decision.Allow("uploads: certificate '" + printable(anonymous.verified()) + "' signed by "
                        + "the CA (" + anonymous.reason().code() + "), in an allowed network");
            }
            if (!trust.pinning()) {
                // Without pinning every authenticated caller is a CA one, admitted above: this one is anonymous.
                Identification.Anonymous anonymous = (Identification.Anonymous) identification;
                return new Decision.Deny(anonymous.reason().code(), "uploads need a client certificate signed by the "
                        + "CA ([nodes] ca_file) in certificate-validation mode: " + anonymous.detail());
            }
        }
        if (authorization == null || !authorization.regionMatches(true, 0, BASIC, 0, BASIC.length())) {
            return new Decision.Deny("credentials-missing", "uploads need HTTP Basic credentials (a user of "
                    + usersFile + ", as in the agent's rudder.json DAVUSER/DAVPASSWORD)", UPLOAD_REALM);
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(authorization.substring(BASIC.length()).strip()),
                    StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return new Decision.Deny("credentials-invalid", "the Authorization header is not HTTP Basic "
                    + "credentials (base64 of user:password)", UPLOAD_REALM);
        }
        int colon = decoded.indexOf(':');
        if (colon < 0) {
            // Not user:password: a bare token or password, which must not reach the log or the answer.
            return new Decision.Deny("credentials-invalid", "the Authorization header is not HTTP Basic "
                    + "credentials (base64 of user:password)", UPLOAD_REALM);
        }
        String user = decoded.substring(0, colon);
        if (!users.verify(user, decoded.substring(colon + 1))) {
            return new Decision.Deny("credentials-invalid", "user '" + printable(user) + "' or its password is not "
                    + "accepted by " + usersFile, UPLOAD_REALM);
        }
        return new Decision.Allow("uploads: user " + printable(user) + " of " + usersFile + " in an allowed network");
    }

    private static String printable(String user) {
        String shown = user.length() > 64 ? user.substring(0, 64) + "..." : user;
        StringBuilder clean = new StringBuilder(shown.length());
        shown.codePoints().forEach(c -> clean.appendCodePoint(Character.isISOControl(c) ? '?' : c));
        return clean.toString();
    }

    /**
     * @param caller the caller
     * @return whether the caller's address is in the allowed networks
     */
    public boolean inAllowedNetworks(Caller caller) {
        return networks.contains(caller.address());
    }

    /**
     * Remote run on the TLS listener, without the policy-server networks file: as {@link #remoteRun(boolean,
     * boolean, InetAddress, X509Certificate, KeyHash, PolicyServerNetworks)} with {@link PolicyServerNetworks#NONE}.
     *
     * @param enabled {@code [remote_run] enabled}
     * @param localCallers whether a caller on this machine is accepted without a certificate (root and relay)
     * @param address the client's address
     * @param peer the client's leaf certificate, or null when it sent none
     * @param upstreamPin the policy server's key pin, from the snapshot, or null when this server has none (root)
     * @return the decision
     */
    public static Decision remoteRun(boolean enabled, boolean localCallers, InetAddress address, X509Certificate peer,
            KeyHash upstreamPin) {
        return remoteRun(enabled, localCallers, address, peer, upstreamPin, PolicyServerNetworks.NONE);
    }

    /**
     * Remote run on the TLS listener. This server's own policy server may ask, authenticated by its key (the
     * {@code [upstream]} pin). On a root or a relay, a caller on this machine may ask too, without a certificate:
     * Rudder's webapp posts to {@code https://localhost/rudder/relay-api/remote-run/...} with none, and Apache
     * admits it by the {@code Require local} line of {@code rudder-networks-policy-server-24.conf}. Only 127.0.0.1
     * and ::1 count as this machine for that rule (what {@code localhost} connects from): any local process can
     * already ask the admin listener, so this grants nothing new. Also on a root or a relay, a caller without a
     * certificate whose address that file lists: relayd forwards a remote run to a sub-relay with no client
     * certificate, and Apache on the sub-relay admits it by the file's {@code Require ip <policy server>} line. A
     * caller that presents a certificate is judged by its key alone, as a Pintle policy server always presents one.
     * A node has no Apache: there only its policy server's key is accepted.
     *
     * @param enabled {@code [remote_run] enabled}
     * @param localCallers whether callers without a certificate may be admitted by address (root and relay)
     * @param address the client's address
     * @param peer the client's leaf certificate, or null when it sent none
     * @param upstreamPin the policy server's key pin, from the snapshot, or null when this server has none (root)
     * @param policyServers the snapshot's {@code rudder-networks-policy-server-24.conf}
     * @return the decision
     */
    public static Decision remoteRun(boolean enabled, boolean localCallers, InetAddress address, X509Certificate peer,
            KeyHash upstreamPin, PolicyServerNetworks policyServers) {
        if (!enabled) {
            return new Decision.Deny("remote-run-disabled", "remote run is disabled on this server ([remote_run] "
                    + "enabled = false)");
        }
        KeyHash key = null;
        if (peer != null && upstreamPin != null) {
            // Hashed as the pin was (key_hash may be written sha512//...), compared as values, not as text.
            key = KeyHash.of(upstreamPin.algorithm(), peer.getPublicKey());
            if (key.equals(upstreamPin)) {
                return new Decision.Allow("remote-run: the policy server's pinned key");
            }
        }
        if (localCallers && isThisMachine(address)) {
            return new Decision.Allow("remote-run: a caller on this machine (" + address.getHostAddress()
                    + "), as Apache's rudder-networks-policy-server-24.conf");
        }
        if (localCallers && peer == null && policyServers.contains(address)) {
            return new Decision.Allow("remote-run: " + address.getHostAddress() + " without a certificate, listed in "
                    + policyServers.file() + " (relayd calls its sub-relays so)");
        }
        // Named only when one is configured, so that a caller without the file reads the messages it always read.
        String byAddress = policyServers.file() == null ? ""
                : localCallers ? ", or an address of " + policyServers.describe() + " without a certificate"
                        : " (" + policyServers.file().getFileName() + " admits no caller on a node)";
        if (upstreamPin == null) {
            return new Decision.Deny("no-policy-server", "this server has no policy server ([upstream]): remote "
                    + "runs are accepted from this machine (127.0.0.1, ::1)" + byAddress + " and on its admin "
                    + "listener only, not from " + address.getHostAddress());
        }
        if (peer == null) {
            return new Decision.Deny("no-certificate", "remote run needs the policy server's client certificate"
                    + (localCallers ? " (or a caller on this machine: 127.0.0.1, ::1" + byAddress + ")" : byAddress));
        }
        return new Decision.Deny("not-policy-server", "key " + key + " is not this server's policy server's ("
                + upstreamPin + ")");
    }

    /**
     * The webapp's legacy unauthenticated API paths, which Rudder's webapp vhost keeps to this machine ({@code
     * Require local} and {@code Require not env api_deny} on {@code ^/rudder/api/(status|archives)$} and {@code
     * ^/rudder/api/(techniqueLibrary|dyngroup|deploy)/reload$}), behind the proxied web interface.
     *
     * @param address the client's address
     * @param apiVersion the request's {@code X-API-Version} header, or null: anything but 1s is the new API
     * @return the decision
     */
    public static Decision webappLocalApi(InetAddress address, String apiVersion) {
        if (!isThisMachine(address)) {
            return new Decision.Deny("not-local", "this webapp API path is open to this machine only (127.0.0.1, "
                    + "::1), as Rudder's vhost has it, not to " + address.getHostAddress());
        }
        if (apiVersion != null && !apiVersion.chars().allMatch(c -> c == '1')) {
            return new Decision.Deny("legacy-api", "this webapp API path is the legacy API (X-API-Version 1), not "
                    + "X-API-Version " + apiVersion + ", as Rudder's vhost has it");
        }
        return new Decision.Allow("webapp: legacy API from this machine (" + address.getHostAddress() + ")");
    }

    /**
     * @param address a client address
     * @return whether it is what {@code localhost} connects from: 127.0.0.1 or ::1 (other 127.0.0.0/8 addresses,
     *     which no Rudder caller uses, are not)
     */
    static boolean isThisMachine(InetAddress address) {
        byte[] bytes = address.getAddress();
        if (address instanceof Inet4Address) {
            return bytes[0] == 127 && bytes[1] == 0 && bytes[2] == 0 && bytes[3] == 1;
        }
        return address instanceof Inet6Address && address.isLoopbackAddress();
    }

    /**
     * The pull channel ({@code /rudder/relay-api/remote-run/orders}): a node, by its pinned certificate, from an
     * allowed network, polls the server that is its policy server in the node list (where its orders are routed)
     * and reports on the orders it was given.
     *
     * @param caller the caller
     * @param enabled {@code [remote_run] enabled}
     * @param policyServer the caller's policy server in the node list, or null when it is not listed
     * @param self this server's id
     * @return the decision
     */
    public Decision orderChannel(Caller caller, boolean enabled, NodeId policyServer, NodeId self) {
        if (!enabled) {
            return new Decision.Deny("remote-run-disabled", "remote run is disabled on this server ([remote_run] "
                    + "enabled = false)");
        }
        if (!networks.contains(caller.address())) {
            return networkDenied(caller);
        }
        if (caller.identification() instanceof Identification.Anonymous anonymous) {
            return new Decision.Deny(anonymous.reason().code(), anonymous.detail());
        }
        NodeId node = ((Identification.Authenticated) caller.identification()).node();
        if (!self.equals(policyServer)) {
            return new Decision.Deny("not-policy-server", "node " + node + "'s policy server is " + policyServer
                    + " in nodeslist.json, not this server (" + self + "): its orders are routed there, so its "
                    + "order channel belongs there");
        }
        return new Decision.Allow("remote-run orders: node " + node + " polls its policy server");
    }

    private static Decision networkDenied(Caller caller) {
        return new Decision.Deny("network-not-allowed",
                caller.address().getHostAddress() + " is not in the allowed networks");
    }
}
