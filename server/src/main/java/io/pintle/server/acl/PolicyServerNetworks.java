package io.pintle.server.acl;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Who may ask this root or relay for a remote run without a client certificate: Apache's {@code
 * rudder-networks-policy-server-24.conf}, which Rudder writes as {@code Require local} and {@code Require ip <the
 * policy server's address>} (rudder-techniques {@code techniques/system/rudder-service-apache/1.0/apache/
 * system_rudder_apache_networks_configuration.cf}, {@code remote_run_acl}). relayd forwards a remote run to a
 * sub-relay with no client certificate, so on a relay this file is what admits its policy server's relayd.
 *
 * @param file the file read, or null when none is configured ({@code [networks] policy_server_file = ""})
 * @param present whether the file was there; false when the default file is absent (a server without Rudder's
 *     Apache configuration)
 * @param networks its networks; none when the file is absent or not configured
 */
public record PolicyServerNetworks(Path file, boolean present, AllowedNetworks networks) {
    /** No file configured: no caller is admitted by address. */
    public static final PolicyServerNetworks NONE = new PolicyServerNetworks(null, false, AllowedNetworks.none());

    public PolicyServerNetworks {
        Objects.requireNonNull(networks);
        if (present && file == null) {
            throw new IllegalArgumentException("a present networks file has a path");
        }
    }

    /**
     * @param file the default file, which does not exist
     * @return no network, remembering which file would have listed them
     */
    public static PolicyServerNetworks absent(Path file) {
        return new PolicyServerNetworks(Objects.requireNonNull(file), false, AllowedNetworks.none());
    }

    /**
     * @param address a client address
     * @return whether the file lists it
     */
    public boolean contains(InetAddress address) {
        return present && networks.contains(address);
    }

    /** @return the file for messages: its path, and whether it is absent or not configured */
    public String describe() {
        if (file == null) {
            return "no policy-server networks file ([networks] policy_server_file = \"\")";
        }
        return present ? file.toString() : file + " (absent)";
    }
}
