package io.pintle.bench;

/** What a row's requests do, the status they must get, and the unit the table reports them in. */
enum Kind {
    /** {@code GET} with {@code If-None-Match} set to the file's current ETag: the agent's "nothing changed" poll. */
    CONDITIONAL(304, true, false, Unit.REQUESTS),
    /** Plain {@code GET} of a small file on a keep-alive connection. */
    FULL_GET(200, false, false, Unit.REQUESTS),
    /** Plain {@code GET} of a large file, reported as bytes per second. */
    DOWNLOAD(200, false, false, Unit.MEGABYTES),
    /** {@code GET} with {@code Connection: close}: each request pays a full TLS handshake with client certificate. */
    NEW_CONNECTION(200, false, true, Unit.CONNECTIONS);

    /** How a row's throughput is counted. */
    enum Unit {
        REQUESTS("req/s"),
        MEGABYTES("MB/s"),
        CONNECTIONS("conn/s");

        private final String suffix;

        Unit(String suffix) {
            this.suffix = suffix;
        }

        /** @return the unit as printed */
        String suffix() {
            return suffix;
        }
    }

    private final int expectedStatus;
    private final boolean conditional;
    private final boolean closeConnection;
    private final Unit unit;

    Kind(int expectedStatus, boolean conditional, boolean closeConnection, Unit unit) {
        this.expectedStatus = expectedStatus;
        this.conditional = conditional;
        this.closeConnection = closeConnection;
        this.unit = unit;
    }

    /** @return the only status that counts as success */
    int expectedStatus() {
        return expectedStatus;
    }

    /** @return whether requests carry {@code If-None-Match} */
    boolean conditional() {
        return conditional;
    }

    /** @return whether requests ask for the connection to be closed after the response */
    boolean closeConnection() {
        return closeConnection;
    }

    /** @return the throughput unit */
    Unit unit() {
        return unit;
    }
}
