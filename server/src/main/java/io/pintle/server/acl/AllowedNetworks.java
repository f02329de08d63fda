package io.pintle.server.acl;

import java.net.InetAddress;
import java.util.List;

/**
 * The networks allowed to fetch policies: Apache's {@code Require all granted} ({@code all}) or a list of
 * networks. Empty means nobody (default deny).
 *
 * @param all whether every address is allowed
 * @param networks the allowed networks
 */
public record AllowedNetworks(boolean all, List<Cidr> networks) {
    public AllowedNetworks {
        networks = List.copyOf(networks);
    }

    /** @return no network allowed */
    public static AllowedNetworks none() {
        return new AllowedNetworks(false, List.of());
    }

    /**
     * @param address a client address
     * @return whether it is allowed
     */
    public boolean contains(InetAddress address) {
        if (all) {
            return true;
        }
        for (Cidr network : networks) {
            if (network.contains(address)) {
                return true;
            }
        }
        return false;
    }
}
