package io.pintle.server.delivery;

import io.pintle.server.policy.FileVersion;
import io.pintle.server.policy.PolicyArchives;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Which file of a node's directory says which policies it holds, per kind of agent. A node "fetched its policies"
 * when it was answered one of these: Rudder's Linux agent in HTTPS mode downloads {@code rules/rudder.tar.bz2}
 * (rudder-agent {@code agent-update}), the Windows agent {@code rules/dsc/rudder.zip}, and an agent on CFEngine's
 * protocol first copies {@code rules/cfengine-community/rudder-promises-generated} and copies the whole tree only
 * when that changed (rudder-techniques {@code common/1.0/update.st}).
 */
public final class PolicyEntry {
    /** HTTPS Linux agents' archive. */
    public static final String LINUX_ARCHIVE = "rules/rudder.tar.bz2";
    /** Windows agents' archive. */
    public static final String DSC_ARCHIVE = "rules/dsc/rudder.zip";
    /** The generation stamp CFEngine agents compare. */
    public static final String CFENGINE_STAMP = "rules/cfengine-community/rudder-promises-generated";
    /** The tree a Linux archive packs and CFEngine agents copy. */
    public static final String CFENGINE_TREE = "rules/cfengine-community";

    private static final List<String> ALL = List.of(LINUX_ARCHIVE, DSC_ARCHIVE, CFENGINE_STAMP);

    private PolicyEntry() {}

    /**
     * @param relative a path below a node's directory, as the request named it
     * @return whether it is one of the entries
     */
    public static boolean is(String relative) {
        return ALL.contains(relative);
    }

    /**
     * @param nodeRoot the node's directory as served now (a frozen node's frozen copy)
     * @param entry one of the entries
     * @return the entity tag it is served with now, or null when it is absent or unreadable
     */
    public static String currentEtag(Path nodeRoot, String entry) {
        return currentEtag(nodeRoot, entry, null);
    }

    /**
     * @param nodeRoot the node's directory as served now (a frozen node's frozen copy)
     * @param entry one of the entries
     * @param archives the archives Pintle builds where Rudder's hook has not, or null
     * @return the entity tag it is served with now (for a Linux archive Pintle builds, the built one's, once
     *     built for this generation), or null when it is absent or unreadable
     */
    public static String currentEtag(Path nodeRoot, String entry, PolicyArchives archives) {
        if (archives != null && LINUX_ARCHIVE.equals(entry) && PolicyArchives.needed(nodeRoot) != null) {
            return archives.builtEtag(nodeRoot);
        }
        try {
            FileVersion version = FileVersion.of(nodeRoot.resolve(entry));
            return version.directory() ? null : version.etag();
        } catch (IOException absent) {
            return null;
        }
    }
}
