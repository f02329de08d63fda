package io.pintle.server.uploads;

import io.pintle.server.nodes.NodeId;
import java.util.regex.Pattern;

/**
 * What an upload's file name says, as Rudder's agents name their files and relayd reads them: the node it is from,
 * and an inventory's pair (its signature). Pure functions.
 *
 * <ul>
 *   <li>reports: {@code <date>@<node id>.log[.gz|.zip]} (rudder-agent's {@code report.sh}, relayd's run info v1)
 *       or {@code <node id>_<date>.log[.gz|.zip]} (relayd's v2, Rudder 8.1+: the id is everything before the first
 *       {@code _});</li>
 *   <li>inventories: {@code <node id>_<date>.ocs[.gz]} with its {@code .ocs.sign} (rudder-agent's {@code
 *       do-inventory}), or {@code <hostname>-<uuid>.ocs[.gz]} (older agents: the UUID ends the name).</li>
 * </ul>
 */
public final class UploadNames {
    private static final Pattern UUID_END = Pattern.compile(
            ".*-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})");
    /** An inventory's signature file ends so; its inventory is the same name ending {@code .ocs.gz} or {@code .ocs}. */
    public static final String SIGN_SUFFIX = ".sign";

    private UploadNames() {}

    /**
     * @param kind the route
     * @param name the file name
     * @return the node the name says the file is from, or null when it names none
     */
    public static NodeId node(UploadKind kind, String name) {
        return kind == UploadKind.REPORTS ? reportNode(name) : inventoryNode(name);
    }

    /**
     * @param name a report's file name
     * @return the node it is from, or null when the name is not a report's
     */
    public static NodeId reportNode(String name) {
        String stem = strip(name, ".gz", ".zip");
        if (!stem.endsWith(".log")) {
            return null;
        }
        stem = stem.substring(0, stem.length() - ".log".length());
        int at = stem.lastIndexOf('@');
        String id;
        if (at >= 0) {
            id = stem.substring(at + 1);
        } else {
            int underscore = stem.indexOf('_');
            id = underscore > 0 ? stem.substring(0, underscore) : null;
        }
        return id(id);
    }

    /**
     * @param name an inventory's or its signature's file name
     * @return the node it is from, or null when the name says none
     */
    public static NodeId inventoryNode(String name) {
        String stem = strip(strip(name, SIGN_SUFFIX, ".gz"), ".ocs", ".xml");
        var uuid = UUID_END.matcher(stem);
        if (uuid.matches()) {
            return id(uuid.group(1));
        }
        int underscore = stem.indexOf('_');
        return underscore > 0 ? id(stem.substring(0, underscore)) : null;
    }

    /**
     * @param name an upload's name
     * @return whether it is an inventory's signature ({@code <inventory>.sign})
     */
    public static boolean isSignature(String name) {
        return name.endsWith(SIGN_SUFFIX) && name.length() > SIGN_SUFFIX.length();
    }

    /**
     * @param name an inventory's or its signature's name
     * @return the name both share: the inventory's without {@code .gz}, the signature's without {@code .sign}
     *     ({@code <id>_<date>.ocs})
     */
    public static String pairKey(String name) {
        return strip(name, SIGN_SUFFIX, ".gz");
    }

    private static String strip(String name, String first, String second) {
        if (name.endsWith(first)) {
            return name.substring(0, name.length() - first.length());
        }
        if (name.endsWith(second)) {
            return name.substring(0, name.length() - second.length());
        }
        return name;
    }

    private static NodeId id(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        try {
            return new NodeId(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
