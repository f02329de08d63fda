package io.pintle.bench.channels;

import java.net.InetSocketAddress;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;

/** The nodes {@link PullClients} plays: each one's identity and the server its channel goes to. */
public interface PullNodes {
    /** @return how many nodes */
    int count();

    /** @return node {@code node}'s id */
    String id(int node);

    /** @return its private key (EC or RSA) */
    PrivateKey key(int node);

    /** @return its certificate */
    X509Certificate certificate(int node);

    /** @return where its channel goes: its policy server */
    InetSocketAddress server(int node);

    /** @return the loopback address its channel comes from (each node is its own host) */
    default java.net.InetAddress source(int node) throws java.io.IOException {
        return java.net.InetAddress.getByAddress(new byte[] {127, 1, (byte) (node / 250), (byte) (1 + node % 250)});
    }
}
