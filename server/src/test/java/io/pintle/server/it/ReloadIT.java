package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.api.Routes;
import io.pintle.client.FetchResult;
import io.pintle.client.PintleClient;
import io.pintle.client.ProblemException;
import io.pintle.server.reload.ReloadOutcome;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestServer;
import io.pintle.server.tls.SelfSigned;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reload under load: every trigger, failures that change nothing, and nothing dropped. */
class ReloadIT {

    @Test
    void nodeAddedByAtomicReplaceOfTheInputsIsServedWithin2sWithoutAnySignal(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-b/rules/rudder.tar.bz2", new byte[] {4, 2});
        try (TestServer server = TestServer.start(sandbox)) {
            long start = System.nanoTime();
            NodeKeys b = sandbox.addNode("node-b", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
            PintleClient client = server.client(b);
            Await.until(Duration.ofSeconds(5), "node-b served after the file watch reload",
                    () -> status(client, "/policies/node-b/rules/rudder.tar.bz2", dir) == 200);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
            // The history is recorded just after the publication: wait for it rather than race it.
            Await.asserted(Duration.ofSeconds(5), () -> assertThat(adminStatus(server).path("last_reload")
                    .path("trigger").asText()).startsWith("file watch"));
            assertThat(adminStatus(server).path("generation").asLong()).isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void brokenNodesListIsRejectedOldSnapshotServesAndFixingTheFileRecovers(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys a = sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("node-a/rules/rudder.tar.bz2", new byte[] {1});
        try (TestServer server = TestServer.start(sandbox)) {
            PintleClient client = server.client(a);
            sandbox.nodesListContent("{ \"node-a\": { \"hostname\": ");
            Await.asserted(Duration.ofSeconds(5), () ->
                    assertThat(adminStatus(server).path("reloads").path("failed").asLong()).isGreaterThanOrEqualTo(1));
            var status = adminStatus(server);
            assertThat(status.path("generation").asLong()).isEqualTo(1);
            assertThat(status.path("last_failure").path("error").asText())
                    .contains(dir.resolve("lib/nodeslist.json").toString()).contains("invalid JSON");
            assertThat(status(client, "/policies/node-a/rules/rudder.tar.bz2", dir)).isEqualTo(200);

            TestServer.AdminResponse relayStatus = server.admin("GET", "/rudder/relay-api/1/system/status");
            assertThat(relayStatus.body().path("action").asText()).isEqualTo("getStatus");
            assertThat(relayStatus.body().path("data").path("configuration").path("status").asText()).isEqualTo("error");

            TestServer.AdminResponse refused = server.admin("POST", "/rudder/relay-api/1/system/reload");
            assertThat(refused.status()).isEqualTo(500);
            assertThat(refused.body().path("result").asText()).isEqualTo("error");
            assertThat(refused.body().path("errorDetails").asText()).contains("nodeslist.json");
            assertThat(refused.header(Routes.RELOAD_OUTCOME_HEADER)).isEqualTo("failed");
            assertThat(refused.header(Routes.RELOAD_GENERATION_HEADER)).isEqualTo("1");

            // The fix is a valid nodes list that also adds a node, so that recovery is visible as a new generation.
            NodeKeys b = sandbox.addNode("node-b", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
            Await.asserted(Duration.ofSeconds(5), () ->
                    assertThat(adminStatus(server).path("generation").asLong()).isEqualTo(2));
            assertThat(status(client, "/policies/node-a/rules/rudder.tar.bz2", dir)).isEqualTo(200);
            assertThat(server.client(b).whoami().known()).isTrue();
            Await.asserted(Duration.ofSeconds(5),
                    () -> assertThat(relayConfigurationStatus(server)).isEqualTo("success"));
        }
    }

    @Test
    void slowDownloadSurvivesTenReloadsIncludingItsNodesRemovalThenIsDenied(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        byte[] content = sandbox.randomShareFile("node-1/rules/rudder.tar.bz2", 8 * 1024 * 1024, 3);
        try (TestServer server = TestServer.start(sandbox, "[reload]\nwatch = false")) {
            PintleClient client = server.client(node, HttpClient.Version.HTTP_1_1);
            HttpResponse<InputStream> response = client.httpClient().send(
                    PolicyServingIT.request(client, "/policies/node-1/rules/rudder.tar.bz2").build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(response.statusCode()).isEqualTo(200);
            MessageDigest received = MessageDigest.getInstance("SHA-256");
            int reloads = 0;
            try (InputStream body = response.body()) {
                byte[] chunk = new byte[64 * 1024];
                int read;
                int chunks = 0;
                while ((read = body.read(chunk)) >= 0) {
                    received.update(chunk, 0, read);
                    // A throttled reader on purpose: the response is far from done when the reloads happen.
                    Thread.sleep(5);
                    if (++chunks % 10 == 0 && reloads < 10) {
                        reloads++;
                        if (reloads == 10) {
                            sandbox.remove("node-1");
                        } else {
                            sandbox.addNode("extra-" + reloads, SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
                        }
                        TestServer.AdminResponse reload = server.admin("POST", "/rudder/relay-api/1/system/reload");
                        assertThat(reload.body().path("result").asText()).isEqualTo("success");
                        assertThat(reload.header(Routes.RELOAD_OUTCOME_HEADER)).isEqualTo("applied");
                        assertThat(reload.header(Routes.RELOAD_GENERATION_HEADER)).isEqualTo(Integer.toString(reloads + 1));
                    }
                }
            }
            assertThat(reloads).isEqualTo(10);
            assertThat(HexFormat.of().formatHex(received.digest()))
                    .isEqualTo(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content)));
            assertThat(adminStatus(server).path("generation").asLong()).isEqualTo(11);

            // Same client, same keep-alive connection: the very next request is judged by the new snapshot.
            ProblemException denied = PolicyServingIT.problem(client, "/policies/node-1/rules/rudder.tar.bz2", dir);
            assertThat(denied.problem().status()).isEqualTo(403);
            assertThat(denied.problem().reason()).isEqualTo("unknown-key");
        }
    }

    @Test
    void requestsDuringATightReloadLoopNeverFailAndEachSeesOneSnapshot(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys flipping = sandbox.addNode("flipping", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        sandbox.shareFile("flipping/rules/rudder.tar.bz2", new byte[] {7});
        try (TestServer server = TestServer.start(sandbox, "[reload]\nwatch = false")) {
            // Generation -> whether "flipping" is registered in it. Odd generations have it, even ones do not.
            Map<Long, Boolean> registered = new ConcurrentHashMap<>(Map.of(1L, true));
            AtomicBoolean running = new AtomicBoolean(true);
            java.util.concurrent.atomic.AtomicLong requests = new java.util.concurrent.atomic.AtomicLong();
            ExecutorService clients = Executors.newFixedThreadPool(4);
            List<Future<List<long[]>>> observations = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                PintleClient client = server.client(flipping, i % 2 == 0 ? HttpClient.Version.HTTP_2
                        : HttpClient.Version.HTTP_1_1);
                observations.add(clients.submit(() -> {
                    List<long[]> seen = new ArrayList<>();
                    while (running.get()) {
                        var whoami = client.whoami();
                        seen.add(new long[] {whoami.snapshotGeneration(), whoami.known() ? 1 : 0});
                        requests.incrementAndGet();
                    }
                    return seen;
                }));
            }
            int reloads = 0;
            long start = System.nanoTime();
            boolean present = true;
            // At least 3 s and 400 requests, whichever comes last (bounded at 60 s on a starved machine).
            while (System.nanoTime() - start < Duration.ofSeconds(3).toNanos()
                    || (requests.get() < 400 && System.nanoTime() - start < Duration.ofSeconds(60).toNanos())) {
                present = !present;
                if (present) {
                    sandbox.register("flipping", flipping.certificate(), Sandbox.Pinning.BOTH);
                } else {
                    sandbox.remove("flipping");
                }
                ReloadOutcome outcome = server.server().reloader().reload("test loop").get();
                assertThat(outcome.result()).isEqualTo(ReloadOutcome.Result.APPLIED);
                registered.put(outcome.generation(), present);
                reloads++;
            }
            running.set(false);
            clients.shutdown();
            long total = 0;
            for (Future<List<long[]>> future : observations) {
                // get() rethrows any failed request: zero failures is part of the assertion.
                for (long[] seen : future.get()) {
                    assertThat(registered).containsKey(seen[0]);
                    assertThat(seen[1] == 1).as("generation %d", seen[0]).isEqualTo(registered.get(seen[0]));
                    total++;
                }
            }
            assertThat(reloads).isGreaterThan(10);
            assertThat(total).isGreaterThanOrEqualTo(400);
        }
    }

    @Test
    void serverCertificateRotationServesNewHandshakesWhileAnOpenDownloadContinues(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        byte[] content = sandbox.randomShareFile("node-1/rules/rudder.tar.bz2", 16 * 1024 * 1024, 5);
        String oldPin = sandbox.serverPin();
        try (TestServer server = TestServer.start(sandbox, "[reload]\nwatch = false")) {
            PintleClient old = server.client(node, HttpClient.Version.HTTP_1_1);
            HttpResponse<InputStream> response = old.httpClient().send(
                    PolicyServingIT.request(old, "/policies/node-1/rules/rudder.tar.bz2").build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            long total;
            try (InputStream body = response.body()) {
                total = body.readNBytes(128 * 1024).length;

                SelfSigned.Identity rotated = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "root");
                SelfSigned.writePrivateKey(sandbox.server().keyPath(), rotated.keyPair().getPrivate(), false);
                SelfSigned.writeCertificates(sandbox.server().certificatePath(), rotated.certificate());
                TestServer.AdminResponse reload = server.admin("POST", "/rudder/relay-api/1/system/reload");
                assertThat(reload.body().path("result").asText()).isEqualTo("success");
                String newPin = io.pintle.server.nodes.KeyHash.sha256(rotated.certificate().getPublicKey()).toString();
                assertThat(adminStatus(server).path("server_key").asText()).isEqualTo(newPin);

                PintleClient fresh = PintleClient.builder(server.uri()).pin(newPin)
                        .identity(node.certificatePath(), node.keyPath()).build();
                assertThat(fresh.whoami().known()).isTrue();
                PintleClient stale = PintleClient.builder(server.uri()).pin(oldPin)
                        .identity(node.certificatePath(), node.keyPath()).build();
                assertThat(org.assertj.core.api.Assertions.catchThrowable(stale::whoami))
                        .isInstanceOf(javax.net.ssl.SSLHandshakeException.class);

                total += body.transferTo(java.io.OutputStream.nullOutputStream());
            }
            assertThat(total).isEqualTo(content.length);
        }
    }

    @Test
    void keyAndCertificateThatDoNotMatchAreRefusedAndTheOldOnesKeepServing(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        try (TestServer server = TestServer.start(sandbox, "[reload]\nwatch = false")) {
            SelfSigned.Identity other = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "root");
            SelfSigned.writePrivateKey(sandbox.server().keyPath(), other.keyPair().getPrivate(), false);
            TestServer.AdminResponse reload = server.admin("POST", "/rudder/relay-api/1/system/reload");
            assertThat(reload.status()).isEqualTo(500);
            assertThat(reload.body().path("errorDetails").asText()).contains("does not match the certificate");
            assertThat(server.client(node).whoami().known()).isTrue();
        }
    }

    @Test
    void changingTheListenAddressNeedsARestartAndIsRefusedWhole(@TempDir Path dir) throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        try (TestServer server = TestServer.start(sandbox, "[reload]\nwatch = false")) {
            Path config = dir.resolve("pintle.toml");
            Files.writeString(config, Files.readString(config).replace("127.0.0.1:0\"\n[nodes]", "127.0.0.1:8443\"\n[nodes]"));
            TestServer.AdminResponse reload = server.admin("POST", "/rudder/relay-api/1/system/reload");
            assertThat(reload.status()).isEqualTo(500);
            assertThat(reload.body().path("errorDetails").asText()).contains("general.listen").contains("restart");
        }
    }

    private static com.fasterxml.jackson.databind.JsonNode adminStatus(TestServer server) {
        try {
            return server.admin("GET", "/v1/status").body();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String relayConfigurationStatus(TestServer server) {
        try {
            return server.admin("GET", "/rudder/relay-api/1/system/status").body()
                    .path("data").path("configuration").path("status").asText();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static int status(PintleClient client, String path, Path dir) {
        try {
            FetchResult result = client.fetch(path, dir.resolve("fetched"), null);
            return result.status();
        } catch (ProblemException e) {
            return e.problem().status();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
