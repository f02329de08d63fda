package io.pintle.server.access;

import io.pintle.server.config.ServerConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The route table of CFEngine's door: the trees Rudder's {@code cf-serverd.st} (rudder-techniques, system technique
 * {@code common}) grants on a root or a relay, each with the rule that decides it. A request names an absolute
 * path; cf-serverd resolves it (symbolic links included, {@code realpath}) before it looks up its access rules, and
 * so does this door: the tree a path is served from, and the rule, are those of where it really is. A path in no
 * tree, or in ncf's {@code 50_techniques} (which cf-serverd.st denies to everyone), is {@link Rule#NONE}.
 *
 * <table>
 *   <caption>cf-serverd.st's access rules, as rows</caption>
 *   <tr><th>tree</th><th>cf-serverd.st</th><th>rule</th></tr>
 *   <tr><td>{@code [paths] share}/&lt;uuid&gt;/</td><td>{@code admit_keys => {"MD5=<that node's key>"}}</td>
 *       <td>{@link Rule#NODE_TREE}</td></tr>
 *   <tr><td>{@code [paths] shared_files}/&lt;uuid&gt;/</td><td>the same</td><td>{@link Rule#NODE_TREE}</td></tr>
 *   <tr><td>{@code [cfengine] masterfiles}</td><td>{@code admit_ips => @{def.acl}}</td>
 *       <td>{@link Rule#LIBRARY}</td></tr>
 *   <tr><td>{@code [cfengine] ncf_common}, {@code ncf_local} (not {@code 50_techniques})</td><td>the same</td>
 *       <td>{@link Rule#LIBRARY}</td></tr>
 *   <tr><td>{@code [paths] shared_folder}</td><td>the same</td><td>{@link Rule#LIBRARY}</td></tr>
 * </table>
 */
public final class CfengineRoutes {
    /** ncf's local techniques, which cf-serverd.st denies to everyone ({@code deny_ips => {"0.0.0.0/0"}}). */
    public static final String NCF_TECHNIQUES = "50_techniques";

    /** The rules this door's trees name. */
    public static final java.util.Set<Rule> RULES = java.util.Set.of(Rule.NODE_TREE, Rule.LIBRARY,
            Rule.RUN_COMMAND, Rule.NONE);

    private CfengineRoutes() {}

    /**
     * One tree of the door.
     *
     * @param name what the tree is, for logs and {@code pintle explain}
     * @param root where it is, as configured
     * @param rule the rule that decides a path in it
     */
    public record Tree(String name, Path root, Rule rule) {
        public Tree {
            Objects.requireNonNull(name);
            Objects.requireNonNull(root);
            Objects.requireNonNull(rule);
        }
    }

    /**
     * Where a resolved path falls.
     *
     * @param tree the tree it is in, or null when in none
     * @param rule the rule that decides it
     * @param below the path below the tree's root, {@code /}-separated, empty for the root itself; for
     *     {@link Rule#NODE_TREE} the node's directory comes first
     */
    public record Target(Tree tree, Rule rule, String below) {}

    /**
     * @param config a configuration
     * @return the door's trees as configured, not resolved
     */
    public static List<Tree> trees(ServerConfig config) {
        ServerConfig.Cfengine cfengine = config.cfengine();
        return List.of(
                new Tree("share", config.paths().share(), Rule.NODE_TREE),
                new Tree("shared-files", config.paths().sharedFiles(), Rule.NODE_TREE),
                new Tree("masterfiles", cfengine.masterfiles(), Rule.LIBRARY),
                new Tree("ncf-common", cfengine.ncfCommon(), Rule.LIBRARY),
                new Tree("ncf-local", cfengine.ncfLocal(), Rule.LIBRARY),
                new Tree("shared-folder", config.paths().sharedFolder(), Rule.LIBRARY));
    }

    /**
     * The trees with their roots resolved ({@code realpath}), as resolved request paths are compared with them; a
     * tree whose root does not exist is left out (nothing in it can be asked for).
     *
     * @param trees the door's trees
     * @return those that exist, their roots resolved
     */
    public static List<Tree> resolve(List<Tree> trees) {
        List<Tree> resolved = new ArrayList<>();
        for (Tree tree : trees) {
            try {
                resolved.add(new Tree(tree.name(), tree.root().toRealPath(), tree.rule()));
            } catch (IOException | SecurityException absent) {
                // Not there (ncf not installed, no shared folder yet): no path can be in it.
            }
        }
        return List.copyOf(resolved);
    }

    /**
     * @param real a resolved absolute path (no {@code ..}, no link)
     * @param trees the trees, roots resolved
     * @return where it falls: the tree of the longest root it is in, as cf-serverd picks the longest matching rule
     */
    public static Target route(Path real, List<Tree> trees) {
        Tree best = null;
        for (Tree tree : trees) {
            if (real.startsWith(tree.root())
                    && (best == null || tree.root().getNameCount() > best.root().getNameCount())) {
                best = tree;
            }
        }
        if (best == null) {
            return new Target(null, Rule.NONE, null);
        }
        String below = best.root().relativize(real).toString();
        if (best.name().equals("ncf-local")
                && (below.equals(NCF_TECHNIQUES) || below.startsWith(NCF_TECHNIQUES + "/"))) {
            return new Target(best, Rule.NONE, below);
        }
        return new Target(best, best.rule(), below);
    }
}
