package io.pintle.server.uploads;

import io.pintle.server.nodes.NodeId;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The node an upload's file name is for, as the agents name their files. The name is what the uploader says (the
 * upload routes authenticate a shared password, not a node), so it is good for bookkeeping and per-node bounds,
 * never for access.
 */
public final class UploadNames {
    /** {@code <date>@<uuid>.log.gz}: a run report (rudder-agent {@code share/lib/report.sh}). */
    private static final Pattern REPORT = Pattern.compile(".*@([^@/]+)\\.log(?:\\.gz)?");
    /** A Rudder node id that is a UUID, as it ends an inventory named after its host. */
    private static final String UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
    /** {@code <hostname>-<uuid>.ocs.gz}: an inventory named after its host (older agents, the Windows agent). */
    private static final Pattern HOST_INVENTORY = Pattern.compile("[^/]*-(" + UUID + ")\\.ocs(?:\\.gz|\\.sign)?");
    /**
     * {@code <uuid>_<date>.ocs[.gz|.sign]} (rudder-agent {@code do-inventory}) and {@code <uuid>_<date>.log.gz} (a
     * report named by its node first).
     */
    private static final Pattern NODE_FIRST = Pattern.compile("([^_@/]+)_.*\\.(?:ocs(?:\\.gz|\\.sign)?|log(?:\\.gz)?)");

    private UploadNames() {}

    /**
     * @param name an upload's file name
     * @return the node it names, or null when it names none (or not a valid node id)
     */
    public static NodeId node(String name) {
        Matcher matcher = REPORT.matcher(name);
        if (!matcher.matches()) {
            matcher = HOST_INVENTORY.matcher(name);
            if (!matcher.matches()) {
                matcher = NODE_FIRST.matcher(name);
                if (!matcher.matches()) {
                    return null;
                }
            }
        }
        try {
            return new NodeId(matcher.group(1));
        } catch (IllegalArgumentException notAnId) {
            return null;
        }
    }
}
