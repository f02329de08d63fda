package io.pintle.bench.handshakes;

/** How the server trusts node certificates in a row ({@code [nodes] authentication}), and which client calls. */
enum Mode {
    /** Rudder's default: the client's self-signed certificate, its key pinned in nodeslist.json. */
    PINNED("pinned", "[\"cert_pinning\"]", false),
    /** Certificate-validation mode: the client sends its CA-issued certificate and the intermediate. */
    CA_CHAIN("ca-chain", "[\"cert_validation\"]", true),
    /** Both modes on (a migration), with the CA-chain client: the pinning lookup fails, then the chain is verified. */
    BOTH("both", "[\"cert_pinning\", \"cert_validation\"]", true);

    private final String label;
    private final String authentication;
    private final boolean chainClient;

    Mode(String label, String authentication, boolean chainClient) {
        this.label = label;
        this.authentication = authentication;
        this.chainClient = chainClient;
    }

    /** @return as printed and on the command line */
    String label() {
        return label;
    }

    /** @return the TOML value of {@code [nodes] authentication} */
    String authentication() {
        return authentication;
    }

    /** @return whether the client is the CA-issued one (otherwise the pinned self-signed one) */
    boolean chainClient() {
        return chainClient;
    }

    /** @return whether the server needs the CA bundle */
    boolean validation() {
        return this != PINNED;
    }

    static Mode parse(String text) {
        for (Mode mode : values()) {
            if (mode.label.equals(text)) {
                return mode;
            }
        }
        throw new IllegalArgumentException("unknown mode '" + text + "' (pinned, ca-chain, both)");
    }
}
