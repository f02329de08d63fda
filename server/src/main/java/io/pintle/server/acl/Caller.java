package io.pintle.server.acl;

import io.pintle.server.nodes.Identification;
import java.net.InetAddress;
import java.util.Objects;

/**
 * Who is asking: the source address and what the client certificate proves.
 *
 * @param address the TCP peer address
 * @param identification the node the client certificate authenticates, or why none
 */
public record Caller(InetAddress address, Identification identification) {
    public Caller {
        Objects.requireNonNull(address);
        Objects.requireNonNull(identification);
    }

    /** @return for logs: the authenticated node, or why there is none */
    public String describe() {
        if (identification instanceof Identification.Authenticated authenticated) {
            return "node " + authenticated.node();
        }
        return "no node: " + ((Identification.Anonymous) identification).reason().code();
    }
}
