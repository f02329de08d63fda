package io.pintle.server.http.jersey;

import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.uploads.UploadNames;
import io.pintle.server.uploads.UploadSignatures;
import io.pintle.server.uploads.UploadStore;
import io.pintle.server.uploads.UploadTally;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Verification at the edge ({@code [uploads] verify_signatures}): what an upload must prove before it is kept, on
 * the snapshot its request runs on. relayd checks a report's signature only on the root, when it writes it to the
 * database; here the first server it reaches does, so a forged report goes no further.
 *
 * <ul>
 *   <li>A report is named for a node ({@code <date>@<id>.log.gz}, {@code <id>_<date>.log.gz}: what relayd can
 *       process) that {@code nodeslist.json} lists; a caller authenticated by its certificate is that node or a
 *       relay above it ({@code node-mismatch}); and when a certificate bundle holds the node's key, the report's
 *       S/MIME signature verifies with it ({@code report-signature}). A node whose key no bundle holds here (a node
 *       below a sub-relay, seen by the root) is checked by the first server that holds it.</li>
 *   <li>An inventory update and its {@code .sign}, once both are in (the second one's upload checks the pair):
 *       the signature verifies over the inventory with the node's bundle key ({@code inventory-signature}); a
 *       refused pair leaves neither file. A first inventory ({@code /inventories/}) is not checked against a
 *       pinned key: the node is new, its key is in the inventory, and Rudder's webapp checks it when accepting.</li>
 * </ul>
 */
final class UploadChecks {
    private static final Logger LOG = LoggerFactory.getLogger(UploadChecks.class);

    private UploadChecks() {}

    /**
     * @param kind the route
     * @param name the checked file name
     * @param directory the route's directory (where an inventory's pair is looked for)
     * @param snapshot the request's snapshot
     * @param caller who the request's certificate says it is
     * @param tally counts verified and unverifiable uploads
     * @return the check of the complete body, run before it takes its name
     */
    static UploadStore.Check of(UploadKind kind, String name, Path directory, ServerSnapshot snapshot,
            Identification caller, UploadTally tally) {
        if (!snapshot.config().uploads().verifySignatures()) {
            return temp -> { };
        }
        return switch (kind) {
            case REPORTS -> temp -> report(name, temp, snapshot, caller, tally);
            case INVENTORY_UPDATES -> temp -> inventory(kind, name, temp, directory, snapshot, caller, tally);
            case INVENTORIES -> temp -> { };
        };
    }

    private static void report(String name, Path temp, ServerSnapshot snapshot, Identification caller,
            UploadTally tally) throws IOException {
        NodeId node = UploadNames.reportNode(name);
        if (node == null) {
            throw new PintleException.InvalidRequest("report-name", "'" + name + "' is not a report's name: "
                    + "<date>@<node id>.log.gz as rudder-agent's report.sh names it (or <node id>_<date>.log.gz); "
                    + "relayd processes no other name");
        }
        known(node, snapshot, caller, "report");
        List<PublicKey> keys = snapshot.nodes().certifiedKeys(node);
        if (keys.isEmpty()) {
            tally.verification(UploadKind.REPORTS, UploadTally.Verification.UNVERIFIABLE);
            return;
        }
        UploadSignatures.Verdict verdict;
        try (InputStream in = Files.newInputStream(temp)) {
            verdict = UploadSignatures.verifyReport(name, in, snapshot.config().uploads().maxBytes(), keys);
        }
        settle(UploadKind.REPORTS, node, verdict, tally);
    }

    private static void inventory(UploadKind kind, String name, Path temp, Path directory, ServerSnapshot snapshot,
            Identification caller, UploadTally tally) throws IOException {
        NodeId node = UploadNames.inventoryNode(name);
        if (node == null) {
            tally.verification(kind, UploadTally.Verification.UNVERIFIABLE);
            return;
        }
        known(node, snapshot, caller, "inventory");
        boolean signature = UploadNames.isSignature(name);
        String key = UploadNames.pairKey(name);
        Path other = signature ? inventoryOf(directory, key) : existing(directory.resolve(key + UploadNames.SIGN_SUFFIX));
        if (other == null) {
            return; // the pair is checked when its other half comes
        }
        List<PublicKey> keys = snapshot.nodes().certifiedKeys(node);
        if (keys.isEmpty()) {
            tally.verification(kind, UploadTally.Verification.UNVERIFIABLE);
            return;
        }
        Path inventory = signature ? other : temp;
        Path sign = signature ? temp : other;
        UploadSignatures.Verdict verdict;
        try (InputStream in = Files.newInputStream(inventory); InputStream signIn = Files.newInputStream(sign)) {
            verdict = UploadSignatures.verifyInventory(in, signature ? other.getFileName().toString() : name,
                    signIn, keys);
        } catch (NoSuchFileException gone) {
            return; // the other half left meanwhile (forwarded, or replaced): checked with the next pair
        }
        if (!verdict.ok()) {
            // Nothing of a refused pair is kept: the half already in goes too.
            Files.deleteIfExists(other);
        }
        settle(kind, node, verdict, tally);
    }

    private static Path inventoryOf(Path directory, String key) {
        Path gz = existing(directory.resolve(key + ".gz"));
        return gz != null ? gz : existing(directory.resolve(key));
    }

    private static Path existing(Path path) {
        return Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) ? path : null;
    }

    /** The node must be listed, and be the caller or below it when the caller is authenticated. */
    private static void known(NodeId node, ServerSnapshot snapshot, Identification caller, String what) {
        if (snapshot.nodes().node(node).isEmpty()) {
            LOG.warn("refused {} named for node {}: not in nodeslist.json", what, node);
            throw new PintleException.AccessDenied("node-unknown", "node " + node + ", which this " + what
                    + "'s name names, is not in nodeslist.json: relayd refuses reports of unknown nodes; nothing kept");
        }
        if (caller instanceof Identification.Authenticated authenticated
                && !snapshot.nodes().isWithin(node, authenticated.node())) {
            LOG.warn("refused {} named for node {} from node {}'s certificate", what, node, authenticated.node());
            throw new PintleException.AccessDenied("node-mismatch", "this " + what + " is named for node " + node
                    + " but the client certificate is node " + authenticated.node() + "'s, which is neither that "
                    + "node nor a relay above it; nothing kept");
        }
    }

    private static void settle(UploadKind kind, NodeId node, UploadSignatures.Verdict verdict, UploadTally tally) {
        if (verdict instanceof UploadSignatures.Verdict.Refused refused) {
            tally.verification(kind, UploadTally.Verification.REFUSED);
            LOG.warn("refused {} of node {}: {}", kind.label(), node, refused.detail());
            if (refused.reason() == UploadSignatures.Reason.REPORT_TOO_LARGE) {
                throw new PintleException.TooLarge(refused.reason().code(), refused.detail());
            }
            throw new PintleException.AccessDenied(refused.reason().code(), refused.detail());
        }
        tally.verification(kind, UploadTally.Verification.VERIFIED);
    }
}
