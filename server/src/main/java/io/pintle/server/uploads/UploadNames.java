package io.pintle.server.uploads;

import io.pintle.server.nodes.NodeId;
import java.util.regex.Matcher;
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
    private static final String UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
    /** A date as the agent writes it in file names: ISO 8601, ':' possibly '_' (Windows). */
    private static final String DATE = "[0-9]{4}-[0-9]{2}-[0-9]{2}[^@/\\\\]*";
    /** Rudder 6 to 8: {@code <date>@<node id>.log[.gz|.zip]}. */
    private static final Pattern REPORT_AT = Pattern.compile(DATE + "@([^/\\\\@]+)\\.log(?:\\.gz|\\.zip)?");
    /** Rudder 8.1+: {@code <node id>_<date>.log[.gz|.zip]} (the id has no '_' of its own). */
    private static final Pattern REPORT_UNDERSCORE =
            Pattern.compile("([^/\\\\_@]+)_" + DATE + "\\.log(?:\\.gz|\\.zip)?");
    /** Current agents: {@code <node id>_<date>.ocs[.gz|.sign]}. */
    private static final Pattern INVENTORY_UNDERSCORE =
            Pattern.compile("([^/\\\\_]+)_" + DATE + "\\.ocs(?:\\.gz|\\.sign)?");
    /** Older agents: {@code <hostname>-<uuid>.ocs[.gz|.sign]}. */
    private static final Pattern INVENTORY_HOSTNAME =
            Pattern.compile("[^/\\\\]+-(" + UUID + ")\\.ocs(?:\\.gz|\\.sign)?");
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
     * @param name an upload's file name, whatever its route
     * @return the node it names as a report or as an inventory, or null when it names none
     */
    public static NodeId node(String name) {
        NodeId report = reportNode(name);
        return report != null ? report : inventoryNode(name);
    }

    /**
     * @param name a report's file name, as uploaded under {@code /reports/}
     * @return the node it names ({@code <date>@<id>.log[.gz|.zip]} or {@code <id>_<date>.log[.gz|.zip]}), or null
     *     when it is not a report name or the id is not a node id
     */
    public static NodeId reportNode(String name) {
        return first(name, REPORT_AT, REPORT_UNDERSCORE);
    }

    /**
     * @param name an inventory's or its sign file's name, as uploaded
     * @return the node it names ({@code <id>_<date>.ocs[.gz|.sign]} or {@code <hostname>-<uuid>.ocs[.gz|.sign]}),
     *     or null when it names none
     */
    public static NodeId inventoryNode(String name) {
        // The UUID form first: a hostname may hold a '_', a date never ends with a UUID.
        return first(name, INVENTORY_HOSTNAME, INVENTORY_UNDERSCORE);
    }

    /** @return the node id the first of the patterns that matches the whole name captures, or null */
    private static NodeId first(String name, Pattern... forms) {
        if (name == null) {
            return null;
        }
        for (Pattern form : forms) {
            Matcher matcher = form.matcher(name);
            if (matcher.matches()) {
                return id(matcher.group(1));
            }
        }
        return null;
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
