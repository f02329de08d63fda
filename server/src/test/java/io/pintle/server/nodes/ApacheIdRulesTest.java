package io.pintle.server.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class ApacheIdRulesTest {
    private static final Path FILE = Path.of("/opt/rudder/etc/rudder-apache-nodes-auth.conf");

    private static List<IdRule> parse(String text) throws Exception {
        return ApacheIdRules.parse(text.getBytes(StandardCharsets.UTF_8), FILE);
    }

    @Test
    void ruddersDocumentedFormBecomesIdRules() throws Exception {
        List<IdRule> rules = parse("""
                # from rudder-doc's security page
                SSLUserName SSL_CLIENT_SAN_DNS_0
                RewriteCond "%{SSL:SSL_CLIENT_SAN_DNS_0}=rudder-$1.company.com" "^(.+)=\\1$" [OR]
                  RewriteCond "%{SSL:SSL_CLIENT_S_DN_UID}=$1" "^(.+)=\\1$"
                """);
        assertThat(rules).extracting(IdRule::text)
                .containsExactly("san-dns:rudder-{id}.company.com (DNS SAN 0, exact case)", "uid");
    }

    @Test
    void aSanConditionReadsTheNthDnsSanExactlyAsApacheDoes() throws Exception {
        IdRule second = parse("RewriteCond \"%{SSL:SSL_CLIENT_SAN_DNS_1}=rudder-$1.company.com\" \"^(.+)=\\1$\"\n")
                .get(0);
        IdRule anyCase = parse("RewriteCond \"%{SSL:SSL_CLIENT_SAN_DNS_0}=rudder-$1.company.com\" \"^(.+)=\\1$\" [NC]\n")
                .get(0);
        ClientCertificate certificate = NodeTrustTest.sanCertificate("host.company.com", "rudder-n1.company.com",
                "RUDDER-n2.company.com");
        assertThat(second.read(certificate).id()).isEqualTo("n1");
        // Index 0 is host.company.com: Apache would not look further, nor does Pintle for this rule.
        assertThat(parse("RewriteCond \"%{SSL:SSL_CLIENT_SAN_DNS_0}=rudder-$1.company.com\" \"^(.+)=\\1$\"\n")
                .get(0).read(certificate).problem()).contains("at index 0");
        ClientCertificate upper = NodeTrustTest.sanCertificate("RUDDER-n2.company.com");
        assertThat(parse("RewriteCond \"%{SSL:SSL_CLIENT_SAN_DNS_0}=rudder-$1.company.com\" \"^(.+)=\\1$\"\n")
                .get(0).read(upper).id()).isNull();
        assertThat(anyCase.read(upper).id()).isEqualTo("n2");
    }

    @Test
    void whatWouldReadDifferentlyIsRefusedWithItsLine() {
        assertThatThrownBy(() -> parse("""
                RewriteCond "%{SSL:SSL_CLIENT_SAN_DNS_0}=$1.a.com" "^(.+)=\\1$"
                RewriteCond "%{SSL:SSL_CLIENT_S_DN_UID}=$1" "^(.+)=\\1$"
                """)).hasMessageContaining(FILE + ":2: ").hasMessageContaining("no [OR]");
        assertThatThrownBy(() -> parse("RewriteCond \"%{SSL:SSL_CLIENT_S_DN_CN}=$1\" \"^(.+)=\\1$\"\n"))
                .hasMessageContaining(":1: ").hasMessageContaining("not SSL_CLIENT_S_DN_CN");
        assertThatThrownBy(() -> parse("RewriteRule /x /y\n")).hasMessageContaining("only RewriteCond");
        assertThatThrownBy(() -> parse("RewriteCond \"%{SSL:SSL_CLIENT_SAN_DNS_0}=x.com\" \"^(.+)=\\1$\"\n"))
                .hasMessageContaining("must hold $1");
        assertThatThrownBy(() -> parse("RewriteCond %{SSL:SSL_CLIENT_S_DN_UID} ^x$\n"))
                .hasMessageContaining("not a condition of the form");
        assertThatThrownBy(() -> parse("# nothing\n")).hasMessageContaining("no RewriteCond line");
    }
}
