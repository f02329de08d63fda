package io.pintle.server.acl;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Reads the allowed networks from Rudder's Apache include ({@code /opt/rudder/etc/rudder-networks-24.conf}):
 * lines {@code Require ip <net> [<net>...]}, {@code Require all granted}, {@code Require all denied},
 * {@code Require local}; blank lines and {@code #} comments are ignored. Anything else is an error naming the
 * line, so a typo never silently opens or closes access.
 *
 * <p>The same reader takes Rudder's {@code rudder-networks-policy-server-24.conf}, which rudder-techniques writes as
 * {@code Require local}, then {@code Require ip <policy server address>} when that name resolves (bundle {@code
 * system_rudder_apache_networks_configuration}, {@code remote_run_acl}, in
 * {@code techniques/system/rudder-service-apache/1.0/apache/system_rudder_apache_networks_configuration.cf}): no
 * other directive. {@code Require local} is read as 127.0.0.0/8 and ::1; Apache also counts a client whose address
 * is the server's own address of that connection, which a root reaches through its own {@code Require ip} line.
 */
public final class NetworksLoader {
    private NetworksLoader() {}

    /**
     * @param file the Apache include, or null for none
     * @param extra extra networks from the configuration, each named {@code where} in errors
     * @param where how errors name the extra networks (for example the config key)
     * @return the allowed networks
     * @throws IOException naming the file and line, or the config key, when something is invalid
     */
    public static AllowedNetworks load(Path file, List<String> extra, String where) throws IOException {
        try {
            return parse(file == null ? null : Files.readString(file, StandardCharsets.UTF_8), file, extra, where);
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        }
    }

    /**
     * @param content the Apache include's text, or null for none
     * @param file its name, for messages
     * @param extra extra networks from the configuration
     * @param where how errors name the extra networks
     * @return the allowed networks
     * @throws IOException naming the file and line, or the config key, when something is invalid
     */
    public static AllowedNetworks parse(String content, Path file, List<String> extra, String where)
            throws IOException {
        boolean all = false;
        List<Cidr> networks = new ArrayList<>();
        if (content != null) {
            List<String> lines = content.lines().toList();
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i).strip();
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String here = file + ":" + (i + 1);
                String[] words = line.split("\\s+");
                if (!words[0].equalsIgnoreCase("Require") || words.length < 2) {
                    throw new IOException(here + ": expected 'Require ip ...', 'Require all granted|denied' or "
                            + "'Require local', found '" + line + "'");
                }
                String kind = words[1].toLowerCase(Locale.ROOT);
                if (kind.equals("all") && words.length == 3 && words[2].equalsIgnoreCase("granted")) {
                    all = true;
                } else if (kind.equals("all") && words.length == 3 && words[2].equalsIgnoreCase("denied")) {
                    continue;
                } else if (kind.equals("local") && words.length == 2) {
                    networks.add(Cidr.parse("127.0.0.0/8"));
                    networks.add(Cidr.parse("::1"));
                } else if (kind.equals("ip") && words.length > 2) {
                    for (int w = 2; w < words.length; w++) {
                        try {
                            networks.add(Cidr.parse(words[w]));
                        } catch (IllegalArgumentException e) {
                            throw new IOException(here + ": " + e.getMessage(), e);
                        }
                    }
                } else {
                    throw new IOException(here + ": unsupported directive '" + line + "'");
                }
            }
        }
        for (String text : extra) {
            try {
                networks.add(Cidr.parse(text));
            } catch (IllegalArgumentException e) {
                throw new IOException(where + ": " + e.getMessage(), e);
            }
        }
        return new AllowedNetworks(all, networks);
    }
}
