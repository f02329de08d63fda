package io.pintle.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pintle.server.nodes.IdRule;
import io.pintle.server.nodes.NodeTrust;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code [nodes]} keys of Rudder's two trust modes, and the server certificate each mode picks. */
class TrustConfigTest {
    private static final String ROOT_ID = "[general]\nnode_id = \"root\"\n";

    @TempDir
    Path dir;

    private ServerConfig parse(String nodes) throws ConfigException {
        return ConfigLoader.parse(ROOT_ID + "[nodes]\n" + nodes + "\n", dir.resolve("pintle.toml"));
    }

    @Test
    void defaultsArePinningWithRuddersFilesReadInPlace() throws Exception {
        ServerConfig.Nodes nodes = parse("").nodes();
        assertThat(nodes.authentication()).containsExactly(NodeTrust.Mode.CERT_PINNING);
        assertThat(nodes.caFile()).isEqualTo(Path.of("/var/rudder/lib/ssl/policy_server_ca.pem"));
        assertThat(nodes.caMaxDepth()).isEqualTo(5);
        assertThat(nodes.idRules()).containsExactly(IdRule.UID);
        assertThat(nodes.crlFiles()).isEmpty();
        assertThat(nodes.deniedKeysFile()).isEqualTo(Path.of("/etc/pintle/denied-keys"));
        assertThat(nodes.deniedKeysFileRequired()).isFalse();
    }

    @Test
    void validationModeTakesItsKeysAndApachesServerCertificate() throws Exception {
        ServerConfig config = parse("""
                authentication = ["cert_validation", "cert_pinning"]
                ca_file = "ssl/ca.pem"
                ca_max_depth = 3
                id_rules = ["san-dns:{id}.nodes.example.com", "uid"]
                crl_files = ["ssl/a.crl", "/etc/ssl/b.crl"]
                denied_keys_file = "denied"
                """);
        ServerConfig.Nodes nodes = config.nodes();
        assertThat(nodes.authentication()).containsExactly(NodeTrust.Mode.CERT_PINNING,
                NodeTrust.Mode.CERT_VALIDATION);
        assertThat(nodes.caFile()).isEqualTo(dir.resolve("ssl/ca.pem"));
        assertThat(nodes.caMaxDepth()).isEqualTo(3);
        assertThat(nodes.idRules()).extracting(IdRule::text)
                .containsExactly("san-dns:{id}.nodes.example.com", "uid");
        assertThat(nodes.crlFiles()).containsExactly(dir.resolve("ssl/a.crl"), Path.of("/etc/ssl/b.crl"));
        assertThat(nodes.deniedKeysFile()).isEqualTo(dir.resolve("denied"));
        assertThat(nodes.deniedKeysFileRequired()).isTrue();
        if (!java.nio.file.Files.exists(ServerConfig.Tls.DEDICATED_CERTIFICATE)) {
            // Both modes: the agent pair, which pinned agents check. Validation alone: Apache's agent-http pair.
            assertThat(config.tls().certificate()).isEqualTo(ServerConfig.Tls.DEFAULTS.certificate());
            ServerConfig alone = parse("authentication = [\"cert_validation\"]");
            assertThat(alone.tls().certificate()).isEqualTo(Path.of("/opt/rudder/etc/ssl/agent-http.cert"));
            assertThat(alone.tls().key()).isEqualTo(Path.of("/opt/rudder/etc/ssl/agent-http.key"));
            assertThat(parse("").tls().certificate()).isEqualTo(ServerConfig.Tls.DEFAULTS.certificate());
        }
        assertThat(parse("denied_keys_file = \"\"").nodes().deniedKeysFile()).isNull();
    }

    @Test
    void ruddersNodesAuthIncludeIsReadInPlaceUnlessTheRulesAreWrittenHere() throws Exception {
        assertThat(parse("").nodes().nodesAuthFile()).isNull();
        ServerConfig.Nodes validation = parse("authentication = [\"cert_validation\"]").nodes();
        assertThat(validation.nodesAuthFile()).isEqualTo(Path.of("/opt/rudder/etc/rudder-apache-nodes-auth.conf"));
        assertThat(validation.nodesAuthFileRequired()).isFalse();
        assertThat(parse("authentication = [\"cert_validation\"]\nid_rules = [\"uid\"]").nodes().nodesAuthFile())
                .isNull();
        ServerConfig.Nodes explicit = parse("authentication = [\"cert_validation\"]\nnodes_auth_file = \"auth.conf\"")
                .nodes();
        assertThat(explicit.nodesAuthFile()).isEqualTo(dir.resolve("auth.conf"));
        assertThat(explicit.nodesAuthFileRequired()).isTrue();
        assertThatThrownBy(() -> parse("nodes_auth_file = \"a.conf\"\nid_rules = [\"uid\"]"))
                .hasMessageContaining("keep one");
        assertThatThrownBy(() -> parse("crl_files = [\"a.crl\"]"))
                .hasMessageContaining("'nodes.crl_files'").hasMessageContaining("denied_keys_file");
    }

    @Test
    void mistakesAreNamed() {
        assertThatThrownBy(() -> parse("authentication = [\"ca\"]"))
                .hasMessageContaining("'nodes.authentication': unknown mode 'ca'")
                .hasMessageContaining("cert_validation");
        assertThatThrownBy(() -> parse("authentication = []")).hasMessageContaining("at least one mode");
        assertThatThrownBy(() -> parse("ca_max_depth = 0")).hasMessageContaining("'nodes.ca_max_depth'");
        assertThatThrownBy(() -> parse("ca_max_depth = 10")).hasMessageContaining("between 1");
        assertThatThrownBy(() -> parse("id_rules = [\"uid\", \"cn\"]"))
                .hasMessageContaining("'nodes.id_rules[1]'").hasMessageContaining("not an id rule");
        assertThatThrownBy(() -> parse("id_rules = []")).hasMessageContaining("at least one rule");
        assertThat(List.of(NodeTrust.Mode.values())).extracting(NodeTrust.Mode::text)
                .containsExactly("cert_pinning", "cert_validation");
    }
}
