package io.pintle.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.nodes.ClientCertificate;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.reload.SnapshotLoader;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.tls.SelfSigned;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The one access function as a table: who (a pinned node, another pinned node, a certificate no node owns, no
 * certificate), from where, with which method, on which path, gets what — found by the server's route table and
 * decided by {@link Access#decide}, as the server's handlers and {@code pintle explain} ask it. No server: the
 * snapshot is loaded from a sandbox's files as the server loads it. {@code ExplainAgreementIT} keeps one
 * end-to-end check that the running server answers the same.
 */
class AccessTest {
    /** Inventories take the initial password file's logins (a new node's first inventory), the rest the other's. */
    private static final Map<String, String> BASIC = Map.of(
            "INITIAL", basic(Sandbox.INITIAL_PASSWORD),
            "WEBDAV", basic(Sandbox.WEBDAV_PASSWORD),
            "WRONG", basic("not-the-password"));

    @TempDir
    static Path dir;

    private static ServerSnapshot snapshot;
    private static Map<String, ClientCertificate> who;

    @BeforeAll
    static void loadSnapshot() throws Exception {
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys node1 = sandbox.addNode("node-1", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        NodeKeys node2 = sandbox.addNode("node-2", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        NodeKeys stranger = sandbox.unregisteredIdentity("stranger", "node-1");
        sandbox.networks("Require ip 127.0.0.0/8\n");
        snapshot = new SnapshotLoader(ConfigLoader.load(sandbox.config("")), Clock.systemUTC()).load(1);
        who = Map.of(
                "node-1", ClientCertificate.of(node1.certificate()),
                "node-2", ClientCertificate.of(node2.certificate()),
                "stranger", ClientCertificate.of(stranger.certificate()));
    }

    /**
     * @return {@code allowed}, or the refusal's reason with {@code 404} when the request names nothing there is
     *     and {@code 401} when credentials would lift it
     */
    private static String decide(String caller, String address, String method, String path, String authorization)
            throws Exception {
        ClientCertificate presented = caller == null ? null : who.get(caller);
        Caller identified = new Caller(InetAddress.getByName(address),
                snapshot.trust().identify(snapshot.nodes(), presented, Instant.now()));
        Route route = Route.of(false, path);
        Decision decision = Access.decide(route.rule(), method, route.below(path), snapshot, identified,
                presented == null ? null : presented.certificate(),
                new Credentials(authorization, null, Credentials.NONE.logins()));
        if (decision instanceof Decision.Allow) {
            return "allowed";
        }
        Decision.Deny deny = (Decision.Deny) decision;
        return deny.reason() + (deny.absent() ? " 404" : deny.realm() != null ? " 401" : "");
    }

    private static String basic(String password) {
        return "Basic " + Base64.getEncoder().encodeToString((Sandbox.UPLOAD_USER + ":" + password)
                .getBytes(StandardCharsets.UTF_8));
    }

    @ParameterizedTest(name = "[{index}] {0} from {1}: {2} {3} -> {5}")
    @CsvSource(delimiter = '|', nullValues = "-", textBlock = """
            node-1   | 127.0.0.1 | GET  | /policies/node-1/rules/rudder.tar.bz2       | -     | allowed
            node-1   | 127.0.0.1 | HEAD | /policies/node-1/rules/                     | -     | allowed
            node-2   | 127.0.0.1 | GET  | /policies/node-1/rules/rudder.tar.bz2       | -     | uid-mismatch
            stranger | 127.0.0.1 | GET  | /policies/node-1/rules/rudder.tar.bz2       | -     | unknown-key
            -        | 127.0.0.1 | GET  | /policies/node-1/rules/rudder.tar.bz2       | -     | no-certificate
            node-1   | 127.0.0.1 | GET  | /policies/not%20an%20id/rules/x             | -     | no-such-route 404
            node-1   | 127.0.0.1 | GET  | /policies/node-1                            | -     | no-such-route 404
            node-1   | 127.0.0.1 | GET  | /common/library.txt                         | -     | allowed
            -        | 127.0.0.1 | GET  | /common/library.txt                         | -     | allowed
            node-1   | 10.1.2.3  | GET  | /common/library.txt                         | -     | network-not-allowed
            -        | 127.0.0.1 | GET  | /rudder/relay-api/shared-folder/a/b         | -     | no-certificate
            node-1   | 127.0.0.1 | GET  | /rudder/relay-api/shared-folder/a/b         | -     | allowed
            node-1   | 10.1.2.3  | GET  | /rudder/relay-api/shared-folder/a/b         | -     | network-not-allowed
            node-1   | 127.0.0.1 | GET  | /rudder/relay-api/shared-files/node-1/node-2/f | - | allowed
            node-2   | 127.0.0.1 | GET  | /rudder/relay-api/shared-files/node-1/node-2/f | - | uid-mismatch
            node-1   | 127.0.0.1 | GET  | /rudder/relay-api/shared-files/node-1/f     | -     | no-such-route 404
            node-1   | 127.0.0.1 | GET  | /uuid                                       | -     | allowed
            -        | 10.1.2.3  | GET  | /uuid                                       | -     | allowed
            -        | 10.1.2.3  | GET  | /v1/whoami                                  | -     | allowed
            -        | 127.0.0.1 | PUT  | /inventories/node-1.ocs                     | INITIAL | allowed
            -        | 127.0.0.1 | PUT  | /inventories/node-1.ocs                     | WEBDAV | credentials-invalid 401
            -        | 127.0.0.1 | PUT  | /reports/2026-12-06T00:00:00+00:00@node-1.log.gz | WEBDAV | allowed
            -        | 127.0.0.1 | PUT  | /reports/2026-12-06T00:00:00+00:00@node-1.log.gz | WRONG | credentials-invalid 401
            -        | 127.0.0.1 | PUT  | /reports/2026-12-06T00:00:00+00:00@node-1.log.gz | - | credentials-missing 401
            -        | 127.0.0.1 | GET  | /inventories/node-1.ocs                     | INITIAL | method-not-allowed
            node-1   | 127.0.0.1 | PUT  | /reports/2026-12-06T00:00:00+00:00@node-1.log.gz | - | allowed
            node-1   | 127.0.0.1 | PUT  | /reports/2026-12-06T00%3A00%3A00%2B00%3A00%40node-1.log.gz | - | allowed
            node-2   | 127.0.0.1 | PUT  | /reports/2026-12-06T00:00:00+00:00@node-1.log.gz | - | not-below-relay
            node-2   | 127.0.0.1 | PUT  | /reports/2026-12-06T00:00:00+00:00@node-1.log.gz | WEBDAV | allowed
            node-2   | 10.1.2.3  | PUT  | /reports/2026-12-06T00:00:00+00:00@node-2.log.gz | - | network-not-allowed
            node-1   | 127.0.0.1 | PUT  | /reports/%zz@node-1.log.gz                  | -     | credentials-missing 401
            node-2   | 127.0.0.1 | PUT  | /inventories/node-new_2026-12-06T00:00:00+00:00.ocs.gz | - | allowed
            -        | 10.1.2.3  | PUT  | /inventory-updates/node-1.ocs               | WEBDAV | network-not-allowed
            node-1   | 127.0.0.1 | GET  | /rudder/relay-api/remote-run/orders         | -     | allowed
            -        | 127.0.0.1 | GET  | /rudder/relay-api/remote-run/orders         | -     | no-certificate
            node-1   | 127.0.0.1 | POST | /rudder/relay-api/remote-run/nodes/node-2   | -     | allowed
            node-1   | 10.1.2.3  | POST | /rudder/relay-api/remote-run/nodes/node-2   | -     | no-policy-server
            node-1   | 127.0.0.1 | GET  | /rudder/relay-api/1/system/status           | -     | relay-api-denied
            node-1   | 127.0.0.1 | GET  | /rudder/relay-api/                          | -     | relay-api-denied
            node-1   | 127.0.0.1 | GET  | /rudder/index.html                          | -     | no-such-route 404
            node-1   | 127.0.0.1 | GET  | /                                           | -     | no-such-route 404
            node-1   | 127.0.0.1 | GET  | /elsewhere                                  | -     | no-such-route 404
            """)
    void decides(String caller, String address, String method, String path, String authorization, String expected)
            throws Exception {
        String credentials = authorization == null ? null : BASIC.get(authorization);
        assertThat(decide(caller, address, method, path, credentials)).isEqualTo(expected);
    }

    @Test
    void everyRouteOfTheTlsListenerNamesARuleAndEveryRuleIsReached() {
        for (Route route : Route.values()) {
            if (route.listener() == Route.Listener.TLS) {
                assertThat(route.rule()).as(route.name().toLowerCase(Locale.ROOT)).isNotNull();
            }
        }
        // Every rule is some route's, or a door's of its own: none is dead.
        for (Rule rule : Rule.values()) {
            boolean named = false;
            for (Route route : Route.values()) {
                named |= route.rule() == rule;
            }
            named |= CfengineRoutes.RULES.contains(rule);
            assertThat(named).as(rule.name()).isTrue();
        }
    }
}
