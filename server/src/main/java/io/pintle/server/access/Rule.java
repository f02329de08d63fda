package io.pintle.server.access;

import io.pintle.server.uploads.UploadKind;

/**
 * The access rules, one per kind of question a door asks: which caller may do what to which path. A route names
 * its rule ({@link Route#rule}); {@link Access#decide} answers it. A second door (CFEngine's protocol) names the
 * same rules for the same files.
 */
public enum Rule {
    /** A node's own policies: that node, by its certificate, from an allowed network. */
    POLICIES,
    /** Files every node reads: an allowed network (a verified certificate too in certificate-validation mode). */
    COMMON,
    /** relayd's shared folder: any known node, by its certificate, from an allowed network. */
    SHARED_FOLDER,
    /** relayd's shared files: the target node for a download; an allowed network for an upload or a presence check. */
    SHARED_FILES,
    /** {@code PUT /inventories/}: credentials (or a CA-signed certificate) from an allowed network, PUT only. */
    INVENTORIES(UploadKind.INVENTORIES),
    /** {@code PUT /inventory-updates/}: as {@link #INVENTORIES}. */
    INVENTORY_UPDATES(UploadKind.INVENTORY_UPDATES),
    /** {@code PUT /reports/}: as {@link #INVENTORIES}. */
    REPORTS(UploadKind.REPORTS),
    /** A node's order channel: that node, polling the server its orders are routed to. */
    ORDER_CHANNEL,
    /** relayd's remote run: the policy server's key, or this machine, or a listed policy server address. */
    REMOTE_RUN,
    /** The server's node id: public (a verified certificate in certificate-validation mode). */
    UUID,
    /** Open to any caller ({@code /v1/whoami}). */
    OPEN,
    /** The rest of relayd's API on the TLS listener: refused, as Apache's {@code Require all denied}. */
    RELAY_API_DENIED,
    /** The proxied web interface: the webapp decides, but its legacy local API is kept to this machine. */
    WEBAPP,
    /** {@code /}: redirected to the web interface where there is one. */
    WEBAPP_ROOT,
    /** The admin listener, loopback only: open, but remote run there only while remote run is enabled. */
    ADMIN,
    /**
     * CFEngine's door: a node's own tree ({@code share/<uuid>/}, {@code shared-files/<uuid>/}), to that node's key
     * only, as {@code cf-serverd.st}'s {@code admit_keys => {"MD5=..."}}.
     */
    NODE_TREE,
    /**
     * CFEngine's door: the initial policies, ncf's common and local trees and the shared folder, to the allowed
     * networks, new nodes included, as {@code cf-serverd.st}'s {@code admit_ips => @{def.acl}}.
     */
    LIBRARY,
    /**
     * CFEngine's door: {@code EXEC} (cf-runagent), which runs this server's agent, as {@code cf-serverd.st} grants
     * {@code ${g.rudder_command}}: the policy server's key ({@code admit_keys => {"&POLICY_SERVER_KEY&"}}), a
     * root's own, from an allowed network, while remote run is enabled.
     */
    RUN_COMMAND,
    /** No such route: 404. */
    NONE;

    private final UploadKind upload;

    Rule() {
        this(null);
    }

    Rule(UploadKind upload) {
        this.upload = upload;
    }

    /** @return the upload route it guards, or null */
    public UploadKind upload() {
        return upload;
    }
}
