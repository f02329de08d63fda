package io.pintle.bench.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** bench/perf's second method for new connections (issue 39): its row group, its nginx, its ab command line. */
class AbMethodTest {
    @Test
    void theAbMethodRunsOnlyWhenAskedFor() {
        assertThat(PerCoreOptions.parse(Map.of()).rows()).doesNotContain("abmethod")
                .containsAll(PerCoreOptions.DEFAULT_ROWS);
        assertThat(PerCoreOptions.parse(Map.of(), "--rows", "abmethod").rows()).containsExactly("abmethod");
        assertThat(PerCoreOptions.parse(Map.of(), "--rows", "nagle,abmethod,newconn").rows())
                .containsExactlyInAnyOrder("newconn", "nagle", "abmethod");
        assertThatThrownBy(() -> PerCoreOptions.parse(Map.of(), "--rows", "abmethods"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theAbMethodRunsAfterTheNagleRows() {
        assertThat(PerCoreOptions.ROWS.indexOf("abmethod")).isEqualTo(PerCoreOptions.ROWS.indexOf("nagle") + 1);
    }

    @Test
    void theSecondNginxDiffersOnlyInItsVerifyMode() {
        Contenders.NginxSetup one = Contenders.NginxSetup.ONE_CORE;
        Contenders.NginxSetup noCa = Contenders.NginxSetup.ONE_CORE_NO_CA;
        assertThat(noCa.processes()).isEqualTo(one.processes());
        assertThat(noCa.keepaliveRequests()).isEqualTo(one.keepaliveRequests());
        List<String> optional = server(one);
        List<String> optionalNoCa = server(noCa);
        assertThat(optionalNoCa).contains("    ssl_verify_client optional_no_ca;");
        assertThat(optional).contains("    ssl_verify_client optional;");
        // Every other line the same, the nodes' certificates still given (their names are sent, not verified).
        assertThat(optionalNoCa.stream().filter(l -> !l.contains("ssl_verify_client")).toList())
                .isEqualTo(optional.stream().filter(l -> !l.contains("ssl_verify_client")).toList())
                .anyMatch(l -> l.contains("ssl_client_certificate"));
    }

    private static List<String> server(Contenders.NginxSetup setup) {
        return Contenders.nginxServer(ServerKey.ECDSA, 8443, new ServerKey.Files(Path.of("/c.pem"),
                Path.of("/k.pem")), Path.of("/nodescerts.pem"), Path.of("/root"), setup.verifyClient());
    }

    @Test
    void abOffersTls13OnlyWhenAskedFor() {
        List<String> tls13 = PerCoreBench.abNewConnectionArguments(true, 5, 8, "/rsa.pem", "\"e\"",
                "https://127.0.0.1:1/x");
        assertThat(tls13).containsExactly("ab", "-q", "-r", "-f", "TLS1.3", "-t", "5", "-n", "100000000", "-c", "8",
                "-E", "/rsa.pem", "-H", "If-None-Match: \"e\"", "https://127.0.0.1:1/x");
        assertThat(PerCoreBench.abNewConnectionArguments(false, 5, 8, "/rsa.pem", "\"e\"", "https://127.0.0.1:1/x"))
                .doesNotContain("-f", "TLS1.3", "-k").hasSize(tls13.size() - 2);
    }
}
