package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.pintle.client.Pem;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code deploy/node/pintle-run-orders} does with order lines a Pintle server never sends: a stand-in policy
 * server (the JDK's HTTPS server, with the sandbox's pinned key) answers its polls with one malformed line after
 * another, shell metacharacters among them, then one valid order. None of them may run anything: the stand-in
 * agent runs once, for the valid order, and no command of the bad lines leaves its mark. A refused order whose id
 * is well formed is reported at once as refused (exit 2), so that its caller does not wait for the deadline.
 */
class NodeOrdersScriptRefusalIT {
    private static final Path SCRIPT = Path.of("../deploy/node/pintle-run-orders").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @Test
    void malformedOrderLinesAreRefusedAndNeverRun() throws Exception {
        assumeTrue(CurlIT.available("curl"), "curl is not installed");
        Path pwned = dir.resolve("pwned");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 14; i++) {
            ids.add(String.format("%032x", 0xabc000L + i));
        }
        // Each answer is the whole body of one 200, as the script reads it.
        List<String> refused = List.of(
                ids.get(0) + " run a;touch " + pwned + "\n",
                ids.get(1) + " run $(touch " + pwned + ")\n",
                ids.get(2) + " run `touch " + pwned + "`\n",
                ids.get(3) + " run a|touch\n",
                ids.get(4) + " shutdown\n",
                ids.get(5) + " run -f\n",
                ids.get(6) + " run a,,b\n",
                ids.get(7) + " run _a\n",
                ids.get(8) + " run a b\n",
                ids.get(9) + " RUN\n",
                ids.get(10) + " run " + "a".repeat(3000) + "\n",
                "../../../etc/passwd run\n",
                ids.get(11) + " run\n" + ids.get(11) + " update\n",
                ids.get(12) + " run");
        String valid = ids.get(13) + " run ok_1\n";
        Queue<String> answers = new ConcurrentLinkedQueue<>(refused);
        answers.add(valid);
        Map<String, String> reports = new ConcurrentHashMap<>();

        Sandbox box = Sandbox.create(dir.resolve("server"));
        NodeKeys node = Sandbox.create(dir.resolve("node-identity"), "node-1", "node").server();
        HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(tls(box.server())));
        server.createContext("/rudder/relay-api/remote-run/orders", exchange -> {
            String path = exchange.getRequestURI().getPath();
            if (exchange.getRequestMethod().equals("PUT")) {
                reports.put(path.substring(path.lastIndexOf('/') + 1),
                        new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
                exchange.sendResponseHeaders(204, -1);
            } else {
                String answer = answers.poll();
                if (answer == null) {
                    sleep(200); // as a long poll with no order: the script's next poll comes a moment later
                    exchange.sendResponseHeaders(204, -1);
                } else {
                    byte[] body = answer.getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
                    exchange.sendResponseHeaders(200, body.length);
                    exchange.getResponseBody().write(body);
                }
            }
            exchange.close();
        });
        server.start();

        Path home = dir.resolve("node");
        Path agent = home.resolve("agent");
        Files.createDirectories(agent);
        try (InputStream in = getClass().getResourceAsStream("/fake-agent.sh")) {
            Files.copy(in, agent.resolve("rudder"));
        }
        agent.resolve("rudder").toFile().setExecutable(true);
        // The pin and the port from rudder.json this time (rudder-client's preferred source), no agent.conf.
        Files.writeString(home.resolve("rudder.json"), "{\n  \"POLICY_SERVER_KEY_HASH\":\"" + box.serverPin()
                + "\",\n  \"HTTPS_POLICY_DISTRIBUTION_PORT\":\"" + server.getAddress().getPort() + "\",\n}\n");
        Files.writeString(home.resolve("policy_server.dat"), "127.0.0.1:5309\n");
        Files.writeString(home.resolve("policy_server_hash"), "sha256//WrongWrongWrongWrongWrongWrongWrongWrong000=\n");
        Path log = home.resolve("log");
        ProcessBuilder builder = new ProcessBuilder(CurlIT.available("dash") ? "dash" : "sh", SCRIPT.toString());
        Map<String, String> env = builder.environment();
        env.put("PINTLE_AGENT_CONF", home.resolve("absent/agent.conf").toString());
        env.put("PINTLE_POLICY_SERVER_DAT", home.resolve("policy_server.dat").toString());
        env.put("PINTLE_RUDDER_JSON", home.resolve("rudder.json").toString());
        env.put("PINTLE_SERVER_HASH_FILE", home.resolve("policy_server_hash").toString());
        env.put("PINTLE_AGENT_CERT", node.certificatePath().toString());
        env.put("PINTLE_AGENT_KEY", node.keyPath().toString());
        env.put("PINTLE_RUDDER", agent.resolve("rudder").toString());
        env.put("PINTLE_STATE_DIR", home.resolve("state").toString());
        env.put("PINTLE_CURL", "curl");
        env.put("PINTLE_RUN_TIMEOUT", "20");
        Process script = builder.redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Await.until(Duration.ofSeconds(30), () -> "the valid order's report; the script's log:\n" + read(log),
                    () -> reports.containsKey(ids.get(13)));
            String text = Files.readString(log);
            assertThat(reports.get(ids.get(13))).as(text)
                    .startsWith("fake agent: started agent run -uR -D ok_1\n")
                    .endsWith("fake agent: done\n\n" + ids.get(13) + " exit 0\n");
            // The agent ran once, for the valid order; nothing a bad line held ever ran.
            List<String> argvs;
            try (Stream<Path> files = Files.list(agent.resolve("runs"))) {
                argvs = files.filter(f -> f.toString().endsWith(".argv")).map(f -> read(f)).toList();
            }
            assertThat(argvs).containsExactly("agent\nrun\n-uR\n-D\nok_1\n");
            assertThat(pwned).doesNotExist();
            assertThat(text.split("order REFUSED, not run: ", -1)).as(text).hasSize(refused.size() + 1);
            // Refusals with a well-formed id were reported as such; an answer that is not one line is not parsed.
            for (int i = 0; i <= 9; i++) {
                assertThat(reports.get(ids.get(i))).as(ids.get(i) + "\n" + text)
                        .startsWith("pintle-run-orders: refused: ").endsWith("\n\n" + ids.get(i) + " exit 2\n");
            }
            assertThat(reports).doesNotContainKeys(ids.get(10), ids.get(11), ids.get(12)).hasSize(11);
            assertThat(text).doesNotContain("sha256//Wrong");
        } finally {
            script.destroy();
            script.waitFor(10, TimeUnit.SECONDS);
            script.descendants().forEach(ProcessHandle::destroyForcibly);
            script.destroyForcibly();
            server.stop(0);
        }
    }

    private static SSLContext tls(NodeKeys identity) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        char[] password = "test".toCharArray();
        store.setKeyEntry("server", Pem.readPrivateKey(identity.keyPath()), password,
                Pem.readCertificates(identity.certificatePath()).toArray(new Certificate[0]));
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, password);
        SSLContext context = SSLContext.getInstance("TLSv1.3");
        context.init(keys.getKeyManagers(), null, null);
        return context;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis); // only for the stand-in's long poll above
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
