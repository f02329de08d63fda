package io.pintle.bench;

import org.eclipse.jetty.http.HttpVersion;

/** The HTTP version a row is measured with; both run over TLS 1.3 and are chosen by ALPN. */
enum Protocol {
    HTTP_1_1("1.1", HttpVersion.HTTP_1_1),
    HTTP_2("2", HttpVersion.HTTP_2);

    private final String label;
    private final HttpVersion version;

    Protocol(String label, HttpVersion version) {
        this.label = label;
        this.version = version;
    }

    /** @return how the table shows it */
    String label() {
        return label;
    }

    /** @return Jetty's version constant, which responses must carry */
    HttpVersion version() {
        return version;
    }
}
