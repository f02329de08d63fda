package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.server.testing.AgentReports;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import io.pintle.server.uploads.UploadKind;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Verification at the edge, with the defaults ({@code [uploads] verify_signatures} on): reports and inventory
 * updates made by the real {@code openssl} as rudder-agent makes them, sent as it sends them. A report named for one
 * node but signed by another's key, or sent with another node's certificate, is refused by the first server it
 * reaches and nothing of it is kept; so is an inventory whose {@code .sign} does not verify, both halves.
 */
class UploadSignaturesIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    private static Sandbox sandbox;
    private static TestServer server;
    private static NodeKeys nodeA;
    private static NodeKeys nodeB;
    private static Path made;

    @BeforeAll
    static void start() throws Exception {
        sandbox = Sandbox.create(dir.resolve("server"));
        nodeA = sandbox.addNode("node-a", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        nodeB = sandbox.addNode("node-b", SelfSigned.KeyType.RSA_2048, Sandbox.Pinning.BOTH);
        made = Files.createDirectories(dir.resolve("agent"));
        server = TestServer.start(sandbox);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void aReportSignedByItsNodeIsKeptAsSent() throws Exception {
        Path report = AgentReports.report(made, "2026-12-06T10:00:00+00:00@node-a.log.gz", nodeA, "R: run ok\n");
        if (CurlIT.available("curl")) {
            // report.sh's request: rudder-client -e /reports/ -- --upload-file FILE (no -c: Basic).
            CurlIT.Result curl = CurlIT.curl(List.of("--tlsv1.3", "--location", "--fail", "--connect-timeout", "10",
                    "--noproxy", "*", "--insecure", "--pinnedpubkey", sandbox.serverPin(), "--insecure", "--silent",
                    "--show-error", "--user", Sandbox.UPLOAD_USER + ":" + Sandbox.WEBDAV_PASSWORD),
                    server.uri() + "/reports/", "--upload-file", report.toString(), "-o", "/dev/null");
            assertThat(curl.exit()).as(curl.stderr()).isZero();
        } else {
            assertThat(server.upload("/reports/", report).statusCode()).isEqualTo(201);
        }
        assertThat(Files.readAllBytes(sandbox.uploads(UploadKind.REPORTS).resolve(report.getFileName())))
                .isEqualTo(Files.readAllBytes(report));
        assertThat(server.metric("pintle_upload_signatures_total{kind=\"reports\",outcome=\"verified\"}"))
                .isGreaterThanOrEqualTo(1.0);
    }

    @Test
    void aReportNamedForOneNodeButSignedByAnotherIsRefusedAndNothingKept() throws Exception {
        Path forged = AgentReports.report(made, "2026-12-06T10:05:00+00:00@node-a.log.gz", nodeB, "R: forged\n");
        HttpResponse<String> refused = server.upload("/reports/", forged);

        assertThat(refused.statusCode()).isEqualTo(403);
        JsonNode problem = JSON.readTree(refused.body());
        assertThat(problem.path("reason").asText()).isEqualTo("report-signature");
        assertThat(problem.path("detail").asText()).contains("node-a");
        assertNothingKept(UploadKind.REPORTS, forged.getFileName().toString());
        assertThat(server.metric("pintle_upload_signatures_total{kind=\"reports\",outcome=\"refused\"}"))
                .isGreaterThanOrEqualTo(1.0);
    }

    @Test
    void aReportSentWithAnotherNodesCertificateIsRefused() throws Exception {
        // Signed by node-a's key, but the connection is node-b's: node-b is not node-a nor a relay above it.
        Path report = AgentReports.report(made, "2026-12-06T10:10:00+00:00@node-a.log.gz", nodeA, "R: run\n");
        HttpResponse<String> refused = server.upload("/reports/", report, nodeB);

        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(refused.body()).path("reason").asText()).isEqualTo("node-mismatch");
        assertNothingKept(UploadKind.REPORTS, report.getFileName().toString());
        // With its own certificate the same report is node-a's.
        assertThat(server.upload("/reports/", report, nodeA).statusCode()).isEqualTo(201);
    }

    @Test
    void aReportOfAnUnknownNodeOrWithoutANodeInItsNameIsRefused() throws Exception {
        Path unknown = AgentReports.report(made, "2026-12-06T10:15:00+00:00@node-z.log.gz", nodeA, "R: run\n");
        HttpResponse<String> refused = server.upload("/reports/", unknown);
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(refused.body()).path("reason").asText()).isEqualTo("node-unknown");

        Path unnamed = Files.copy(unknown, made.resolve("runlog.gz"));
        HttpResponse<String> invalid = server.upload("/reports/", unnamed);
        assertThat(invalid.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(invalid.body()).path("reason").asText()).isEqualTo("report-name");
        assertNothingKept(UploadKind.REPORTS, unknown.getFileName().toString());
        assertNothingKept(UploadKind.REPORTS, unnamed.getFileName().toString());
    }

    @Test
    void anInventoryUpdateIsCheckedWithItsSignatureAndARefusedPairLeavesNeither() throws Exception {
        String xml = "<?xml version=\"1.0\"?>\n<REQUEST><DEVICEID>node-a</DEVICEID></REQUEST>\n";
        Path good = AgentReports.inventory(made, "node-a_2026-12-06T10:00:00+00:00", nodeA, xml);
        assertThat(server.upload("/inventory-updates/", good).statusCode()).isEqualTo(201);
        assertThat(server.upload("/inventory-updates/", good.resolveSibling("node-a_2026-12-06T10:00:00+00:00.ocs.sign"))
                .statusCode()).isEqualTo(201);
        Path updates = sandbox.uploads(UploadKind.INVENTORY_UPDATES);
        assertThat(updates.resolve("node-a_2026-12-06T10:00:00+00:00.ocs.gz")).exists();
        assertThat(updates.resolve("node-a_2026-12-06T10:00:00+00:00.ocs.sign")).exists();

        // node-a's inventory signed with node-b's key: the .sign is refused and the inventory goes with it.
        Path forged = AgentReports.inventory(made, "node-a_2026-12-06T11:00:00+00:00", nodeB, xml);
        assertThat(server.upload("/inventory-updates/", forged).statusCode()).isEqualTo(201);
        HttpResponse<String> refused = server.upload("/inventory-updates/",
                forged.resolveSibling("node-a_2026-12-06T11:00:00+00:00.ocs.sign"));
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(refused.body()).path("reason").asText()).isEqualTo("inventory-signature");
        assertNothingKept(UploadKind.INVENTORY_UPDATES, "node-a_2026-12-06T11:00:00+00:00.ocs.sign");
        assertNothingKept(UploadKind.INVENTORY_UPDATES, "node-a_2026-12-06T11:00:00+00:00.ocs.gz");
    }

    @Test
    void aNewNodesFirstInventoryIsTakenAsRudderTakesIt() throws Exception {
        // No key of node-new anywhere yet: its key is in its inventory, checked by the webapp at acceptance.
        NodeKeys newcomer = sandbox.unregisteredIdentity("node-new", "node-new");
        Path inventory = AgentReports.inventory(made, "node-new_2026-12-06T10:00:00+00:00", newcomer,
                "<?xml version=\"1.0\"?>\n<REQUEST/>\n");
        assertThat(server.upload("/inventories/", inventory).statusCode()).isEqualTo(201);
        assertThat(server.upload("/inventories/", inventory.resolveSibling("node-new_2026-12-06T10:00:00+00:00.ocs.sign"))
                .statusCode()).isEqualTo(201);
    }

    private static void assertNothingKept(UploadKind kind, String name) throws Exception {
        Path directory = sandbox.uploads(kind);
        assertThat(directory.resolve(name)).doesNotExist();
        try (Stream<Path> files = Files.list(directory)) {
            assertThat(files.map(path -> path.getFileName().toString())).noneMatch(file -> file.startsWith("."));
        }
    }

}
