package io.pintle.server.acl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.nodes.Identification;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.tls.SelfSigned;
import io.pintle.server.uploads.Htpasswd;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class AclEvaluatorTest {
    private static final NodeId NODE_1 = new NodeId("node-1");
    private static final NodeId NODE_2 = new NodeId("node-2");
    private static final KeyHash KEY = new KeyHash("sha256", Base64.getEncoder().encodeToString(new byte[32]));

    private final AclEvaluator acl = new AclEvaluator(
            new AllowedNetworks(false, List.of(Cidr.parse("192.168.0.0/16"), Cidr.parse("2001:db8::/32"))));

    private static Caller caller(String address, Identification identification) throws UnknownHostException {
        return new Caller(InetAddress.getByName(address), identification);
    }

    private static Identification authenticated(NodeId node) {
        return new Identification.Authenticated(node, KEY);
    }

    @Test
    void nodeReadsItsOwnPolicies() throws UnknownHostException {
        Decision decision = acl.policies(caller("192.168.1.10", authenticated(NODE_1)), NODE_1);

        assertThat(decision).isInstanceOf(Decision.Allow.class);
        assertThat(((Decision.Allow) decision).rule()).contains("node-1");
    }

    @Test
    void nodeFromAnIpv6AllowedNetworkReadsItsOwnPolicies() throws UnknownHostException {
        assertThat(acl.policies(caller("2001:db8::42", authenticated(NODE_1)), NODE_1))
                .isInstanceOf(Decision.Allow.class);
    }

    @Test
    void authenticatedNodeOutsideTheAllowedNetworksIsDenied() throws UnknownHostException {
        Decision decision = acl.policies(caller("10.9.8.7", authenticated(NODE_1)), NODE_1);

        assertThat(decision).isInstanceOfSatisfying(Decision.Deny.class, deny -> {
            assertThat(deny.reason()).isEqualTo("network-not-allowed");
            assertThat(deny.detail()).contains("10.9.8.7");
        });
    }

    @ParameterizedTest
    @EnumSource(Identification.Reason.class)
    void anonymousCallerIsDeniedWithItsReason(Identification.Reason reason) throws UnknownHostException {
        Identification anonymous = new Identification.Anonymous(reason, "why: " + reason);

        Decision decision = acl.policies(caller("192.168.1.10", anonymous), NODE_1);

        assertThat(decision).isEqualTo(new Decision.Deny(reason.code(), "why: " + reason));
    }

    @Test
    void anUploadNeedsAnAllowedNetworkThenAUserOfThePasswordFile() throws Exception {
        Htpasswd users = Htpasswd.parse((Htpasswd.apr1Line("rudder", "secret") + "\n")
                .getBytes(StandardCharsets.UTF_8), Path.of("htpasswd-webdav"));
        Identification none = new Identification.Anonymous(Identification.Reason.NO_CERTIFICATE, "none");
        String good = "Basic " + Base64.getEncoder().encodeToString("rudder:secret".getBytes(StandardCharsets.UTF_8));
        String bad = "Basic " + Base64.getEncoder().encodeToString("rudder:guess".getBytes(StandardCharsets.UTF_8));

        Decision outside = acl.upload(caller("10.9.8.7", none), users, "htpasswd-webdav", good);
        Decision missing = acl.upload(caller("192.168.1.10", none), users, "htpasswd-webdav", null);
        Decision bearer = acl.upload(caller("192.168.1.10", none), users, "htpasswd-webdav", "Bearer x");
        Decision garbled = acl.upload(caller("192.168.1.10", none), users, "htpasswd-webdav", "Basic ***");
        Decision wrong = acl.upload(caller("192.168.1.10", none), users, "htpasswd-webdav", bad);
        Decision right = acl.upload(caller("192.168.1.10", none), users, "htpasswd-webdav", good);

        assertThat(outside).isEqualTo(new Decision.Deny("network-not-allowed", "10.9.8.7 is not in the allowed networks"));
        assertThat(List.of(missing, bearer)).allSatisfy(decision -> assertThat(decision)
                .isInstanceOfSatisfying(Decision.Deny.class, deny -> {
                    assertThat(deny.reason()).isEqualTo("credentials-missing");
                    assertThat(deny.realm()).isEqualTo("WebDAV Storage");
                }));
        assertThat(List.of(garbled, wrong)).allSatisfy(decision -> assertThat(decision)
                .isInstanceOfSatisfying(Decision.Deny.class, deny -> {
                    assertThat(deny.reason()).isEqualTo("credentials-invalid");
                    assertThat(deny.realm()).isEqualTo("WebDAV Storage");
                    assertThat(deny.detail()).doesNotContain("guess");
                }));
        assertThat(right).isEqualTo(new Decision.Allow("uploads: user rudder of htpasswd-webdav in an allowed network"));
    }

    @Test
    void networkIsCheckedBeforeTheCertificate() throws UnknownHostException {
        Identification anonymous = new Identification.Anonymous(Identification.Reason.NO_CERTIFICATE, "none");

        Decision decision = acl.policies(caller("10.9.8.7", anonymous), NODE_1);

        assertThat(decision).isInstanceOfSatisfying(Decision.Deny.class,
                deny -> assertThat(deny.reason()).isEqualTo("network-not-allowed"));
    }

    @Test
    void nodeCannotReadAnotherNodesPolicies() throws UnknownHostException {
        Decision decision = acl.policies(caller("192.168.1.10", authenticated(NODE_1)), NODE_2);

        assertThat(decision).isInstanceOfSatisfying(Decision.Deny.class, deny -> {
            assertThat(deny.reason()).isEqualTo("uid-mismatch");
            assertThat(deny.detail()).contains("node-1").contains("node-2");
        });
    }

    @Test
    void commonIsAllowedFromAnAllowedNetworkWhateverTheCertificate() throws UnknownHostException {
        Identification anonymous = new Identification.Anonymous(Identification.Reason.NO_CERTIFICATE, "none");

        assertThat(acl.common(caller("192.168.200.1", anonymous))).isInstanceOf(Decision.Allow.class);
        assertThat(acl.common(caller("192.168.200.1", authenticated(NODE_2)))).isInstanceOf(Decision.Allow.class);
    }

    @Test
    void commonIsDeniedOutsideTheAllowedNetworks() throws UnknownHostException {
        Decision decision = acl.common(caller("172.16.0.1", authenticated(NODE_1)));

        assertThat(decision).isEqualTo(
                new Decision.Deny("network-not-allowed", "172.16.0.1 is not in the allowed networks"));
    }

    @Test
    void noAllowedNetworkDeniesEverybody() throws UnknownHostException {
        AclEvaluator closed = new AclEvaluator(AllowedNetworks.none());
        Caller local = caller("127.0.0.1", authenticated(NODE_1));

        assertThat(closed.common(local)).isInstanceOf(Decision.Deny.class);
        assertThat(closed.policies(local, NODE_1)).isInstanceOf(Decision.Deny.class);
        assertThat(closed.inAllowedNetworks(local)).isFalse();
    }

    @Test
    void allGrantedAllowsAnyAddress() throws UnknownHostException {
        AclEvaluator open = new AclEvaluator(new AllowedNetworks(true, List.of()));

        assertThat(open.common(caller("203.0.113.1", authenticated(NODE_1)))).isInstanceOf(Decision.Allow.class);
        assertThat(open.policies(caller("203.0.113.1", authenticated(NODE_1)), NODE_1))
                .isInstanceOf(Decision.Allow.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sha256", "sha512"})
    void remoteRunAcceptsThePolicyServersKeyWhateverTheAlgorithmOfItsPin(String algorithm) throws Exception {
        X509Certificate policyServer = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "root").certificate();
        X509Certificate other = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "relay").certificate();
        KeyHash pin = KeyHash.of(algorithm, policyServer.getPublicKey());
        InetAddress remote = InetAddress.getByName("192.0.2.7");

        assertThat(AclEvaluator.remoteRun(true, true, remote, policyServer, pin)).isInstanceOf(Decision.Allow.class);
        assertThat(AclEvaluator.remoteRun(true, true, remote, other, pin)).isInstanceOfSatisfying(Decision.Deny.class,
                deny -> assertThat(deny.reason()).isEqualTo("not-policy-server"));
        assertThat(AclEvaluator.remoteRun(true, true, remote, policyServer, null))
                .isInstanceOfSatisfying(Decision.Deny.class,
                        deny -> assertThat(deny.reason()).isEqualTo("no-policy-server"));
        assertThat(AclEvaluator.remoteRun(true, true, remote, null, pin)).isInstanceOfSatisfying(Decision.Deny.class,
                deny -> assertThat(deny.reason()).isEqualTo("no-certificate"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "::1", "::ffff:127.0.0.1"})
    void remoteRunAcceptsACallerOnThisMachineWithoutCertificateOnARootOrARelay(String address) throws Exception {
        KeyHash pin = KeyHash.of("sha256",
                SelfSigned.generate(SelfSigned.KeyType.EC_P256, "root").certificate().getPublicKey());
        InetAddress local = InetAddress.getByName(address);

        // Root (no policy server) and relay alike: Rudder's webapp posts with no certificate, from localhost.
        assertThat(AclEvaluator.remoteRun(true, true, local, null, null)).isInstanceOfSatisfying(Decision.Allow.class,
                allow -> assertThat(allow.rule()).contains("on this machine"));
        assertThat(AclEvaluator.remoteRun(true, true, local, null, pin)).isInstanceOf(Decision.Allow.class);
        // A node takes its policy server's key only; and nobody when remote run is off.
        assertThat(AclEvaluator.remoteRun(true, false, local, null, pin)).isInstanceOfSatisfying(Decision.Deny.class,
                deny -> assertThat(deny.reason()).isEqualTo("no-certificate"));
        assertThat(AclEvaluator.remoteRun(false, true, local, null, null)).isInstanceOfSatisfying(Decision.Deny.class,
                deny -> assertThat(deny.reason()).isEqualTo("remote-run-disabled"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.2", "127.1.2.3", "10.0.0.1", "fe80::1", "2001:db8::1"})
    void remoteRunRefusesAnyOtherAddressWithoutCertificate(String address) throws Exception {
        assertThat(AclEvaluator.remoteRun(true, true, InetAddress.getByName(address), null, null))
                .isInstanceOfSatisfying(Decision.Deny.class,
                        deny -> assertThat(deny.reason()).isEqualTo("no-policy-server"));
    }

    @ParameterizedTest
    @CsvSource(nullValues = "NULL", textBlock = """
            127.0.0.1, NULL, allow
            ::1,       1,    allow
            127.0.0.1, 11,   allow
            127.0.0.1, 2,    legacy-api
            127.0.0.1, 12,   legacy-api
            127.0.0.2, NULL, not-local
            10.0.0.1,  1,    not-local
            """)
    void theWebappsLegacyApiIsForThisMachineAndTheLegacyVersionOnly(String address, String version, String outcome)
            throws Exception {
        Decision decision = AclEvaluator.webappLocalApi(InetAddress.getByName(address), version);
        if (outcome.equals("allow")) {
            assertThat(decision).isInstanceOf(Decision.Allow.class);
        } else {
            assertThat(decision).isInstanceOfSatisfying(Decision.Deny.class,
                    deny -> assertThat(deny.reason()).isEqualTo(outcome));
        }
    }

    private static final Path POLICY_SERVER_FILE = Path.of("/opt/rudder/etc/rudder-networks-policy-server-24.conf");

    /** As Rudder writes it on a relay whose policy server is 192.0.2.1 (remote_run_acl). */
    private static PolicyServerNetworks policyServerFile() throws Exception {
        return new PolicyServerNetworks(POLICY_SERVER_FILE, true, NetworksLoader.parse(
                "Require local\nRequire ip 192.0.2.1\n", POLICY_SERVER_FILE, List.of(), "test"));
    }

    private static KeyHash somePin() throws Exception {
        return KeyHash.of("sha256", SelfSigned.generate(SelfSigned.KeyType.EC_P256, "root").certificate()
                .getPublicKey());
    }

    @Test
    void remoteRunAdmitsACallerWithoutCertificateListedInThePolicyServerNetworksFile() throws Exception {
        InetAddress relayd = InetAddress.getByName("192.0.2.1");

        // A relay (its policy server pinned) and a root (none) alike: relayd calls without a certificate.
        for (KeyHash pin : new KeyHash[] {somePin(), null}) {
            assertThat(AclEvaluator.remoteRun(true, true, relayd, null, pin, policyServerFile()))
                    .isInstanceOfSatisfying(Decision.Allow.class, allow -> assertThat(allow.rule())
                            .contains("192.0.2.1", POLICY_SERVER_FILE.toString()));
        }
        // Require local: any loopback address, as Apache reads it.
        assertThat(AclEvaluator.remoteRun(true, true, InetAddress.getByName("127.0.0.5"), null, somePin(),
                policyServerFile())).isInstanceOf(Decision.Allow.class);
    }

    @Test
    void remoteRunRefusesAnUnlistedCallerWithoutCertificateNamingTheFile() throws Exception {
        InetAddress elsewhere = InetAddress.getByName("192.0.2.99");

        assertThat(AclEvaluator.remoteRun(true, true, elsewhere, null, somePin(), policyServerFile()))
                .isInstanceOfSatisfying(Decision.Deny.class, deny -> {
                    assertThat(deny.reason()).isEqualTo("no-certificate");
                    assertThat(deny.detail()).contains(POLICY_SERVER_FILE.toString());
                });
        assertThat(AclEvaluator.remoteRun(true, true, elsewhere, null, null, policyServerFile()))
                .isInstanceOfSatisfying(Decision.Deny.class, deny -> {
                    assertThat(deny.reason()).isEqualTo("no-policy-server");
                    assertThat(deny.detail()).contains(POLICY_SERVER_FILE.toString());
                });
        // The default file absent: nobody is admitted by address, and the refusal says why.
        assertThat(AclEvaluator.remoteRun(true, true, InetAddress.getByName("192.0.2.1"), null, somePin(),
                PolicyServerNetworks.absent(POLICY_SERVER_FILE))).isInstanceOfSatisfying(Decision.Deny.class, deny -> {
                    assertThat(deny.reason()).isEqualTo("no-certificate");
                    assertThat(deny.detail()).contains(POLICY_SERVER_FILE + " (absent)");
                });
    }

    @Test
    void aListedAddressAdmitsNeitherAWrongCertificateNorACallerOfANode() throws Exception {
        InetAddress relayd = InetAddress.getByName("192.0.2.1");
        X509Certificate other = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "other").certificate();

        // A certificate is judged by its key alone: a Pintle policy server always presents its own.
        assertThat(AclEvaluator.remoteRun(true, true, relayd, other, somePin(), policyServerFile()))
                .isInstanceOfSatisfying(Decision.Deny.class,
                        deny -> assertThat(deny.reason()).isEqualTo("not-policy-server"));
        // A node has no Apache: its policy server's key only.
        assertThat(AclEvaluator.remoteRun(true, false, relayd, null, somePin(), policyServerFile()))
                .isInstanceOfSatisfying(Decision.Deny.class,
                        deny -> assertThat(deny.reason()).isEqualTo("no-certificate"));
        assertThat(AclEvaluator.remoteRun(false, true, relayd, null, somePin(), policyServerFile()))
                .isInstanceOfSatisfying(Decision.Deny.class,
                        deny -> assertThat(deny.reason()).isEqualTo("remote-run-disabled"));
    }

    @Test
    void cfengineDoorRules() throws UnknownHostException {
        Identification node1 = authenticated(NODE_1);
        assertThat(acl.nodeTree(caller("192.168.1.10", node1), NODE_1)).isInstanceOf(Decision.Allow.class);
        assertThat(acl.nodeTree(caller("192.168.1.10", node1), NODE_2)).isInstanceOfSatisfying(Decision.Deny.class,
                deny -> assertThat(deny.reason()).isEqualTo("key-mismatch"));
        assertThat(acl.nodeTree(caller("10.0.0.1", node1), NODE_1)).isInstanceOfSatisfying(Decision.Deny.class,
                deny -> assertThat(deny.reason()).isEqualTo("network-not-allowed"));
        Identification unknown = new Identification.Anonymous(Identification.Reason.UNKNOWN_KEY, "unknown");
        assertThat(acl.library(caller("192.168.1.10", unknown))).isInstanceOf(Decision.Allow.class);
        assertThat(acl.library(caller("10.0.0.1", unknown))).isInstanceOf(Decision.Deny.class);
    }

    @Test
    void cfruncommandIsThePolicyServersKeyOrARootsOwn() throws UnknownHostException {
        KeyHash other = new KeyHash("sha256", Base64.getEncoder().encodeToString(new byte[31 + 1]).replace('A', 'B'));
        Caller inside = caller("192.168.1.10", authenticated(NODE_1));
        // A relay or node: its policy server's key only.
        assertThat(acl.runCommand(inside, true, KEY, KEY, other)).isInstanceOf(Decision.Allow.class);
        assertThat(acl.runCommand(inside, true, other, KEY, other)).isInstanceOfSatisfying(Decision.Deny.class,
                deny -> assertThat(deny.reason()).isEqualTo("not-policy-server"));
        // A root: its own key.
        assertThat(acl.runCommand(inside, true, other, null, other)).isInstanceOf(Decision.Allow.class);
        assertThat(acl.runCommand(inside, true, KEY, null, other)).isInstanceOf(Decision.Deny.class);
        assertThat(acl.runCommand(inside, false, KEY, KEY, other)).isInstanceOfSatisfying(Decision.Deny.class,
                deny -> assertThat(deny.reason()).isEqualTo("remote-run-disabled"));
        assertThat(acl.runCommand(caller("10.0.0.1", authenticated(NODE_1)), true, KEY, KEY, other))
                .isInstanceOfSatisfying(Decision.Deny.class,
                        deny -> assertThat(deny.reason()).isEqualTo("network-not-allowed"));
    }
}
