package io.pintle.bench.fleet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * What a node's {@code rules/} holds on the root besides its {@code rudder.tar.bz2} ({@code --node-tree}).
 *
 * <ul>
 *   <li>{@link #SMALL}: three small files in {@code cfengine-community/}, each with new content every generation
 *       (the shape every bench/relaysync result before this option measured);
 *   <li>{@link #RUDDER}: the shape of Rudder's generated-policy fixture {@code node-cfe-with-two-directives}: its
 *       37 entries (one a symbolic link) in 12 directories, each named and sized as the fixture's. As in Rudder, a
 *       generation rewrites every file: the node's own files ({@link Change#EACH_GENERATION}) get new content, the
 *       technique library and the rest ({@link Change#NEVER}) the same content as before, with a new mtime.
 * </ul>
 *
 * Content is generated text that names the node (and the generation where it changes), so that no two nodes'
 * files are alike and a relay fetches what changed.
 */
enum NodeTree {
    SMALL("small"),
    RUDDER("rudder");

    /** Whether a file's content changes from one generation to the next. */
    enum Change {
        /** The generation's stamps and what Rudder renders from the node's configuration. */
        EACH_GENERATION,
        /** The techniques' bodies, the common library, certificates, settings: rewritten with the same content. */
        NEVER
    }

    /**
     * One entry of Rudder's fixture.
     *
     * @param path relative to {@code rules/}
     * @param bytes its size in the fixture (a link's: its target's length, as git counts it)
     * @param change whether it changes each generation
     * @param linkTarget the target of a symbolic link, null for a file
     */
    record Entry(String path, int bytes, Change change, String linkTarget) {
        static Entry file(String path, int bytes, Change change) {
            return new Entry(path, bytes, change, null);
        }

        static Entry link(String path, String target) {
            return new Entry(path, target.length(), Change.NEVER, target);
        }
    }

    /** Where {@link #RUDDER}'s shape comes from. */
    static final String FIXTURE = "node-cfe-with-two-directives";

    /**
     * Rudder's {@code webapp/sources/rudder/rudder-core/src/test/resources/configuration-repository/expected-share/
     * node-cfe-with-two-directives/rules/} at Normation/rudder {@code ef661941d9} ({@code git ls-tree -r -l}): names
     * and sizes only. Which files change each generation is this bench's reading of Rudder's generation, not the
     * fixture's.
     */
    static final List<Entry> RUDDER_ENTRIES = List.of(
            Entry.file("cfengine-community/Create_file/1.0/Create_file.cf", 444, Change.NEVER),
            Entry.file("cfengine-community/Create_file/1.0/rudder_reporting.cf", 559, Change.NEVER),
            Entry.link("cfengine-community/certs/policy-server.pem", "root.pem"),
            Entry.file("cfengine-community/certs/root.pem", 1967, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/cf-serverd.cf", 5156, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/common.cf", 1906, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/cron-setup.cf", 2876, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/environment-variables.cf", 522, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/hooks.cf", 45817, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/internal-security.cf", 2648, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/monitoring.cf", 1325, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/properties.cf", 6458, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/reporting-http.cf", 2266, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/rpm-key.cf", 1616, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/rudder-groups.cf", 2186, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/rudder-parameters.cf", 1540, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/rudder_release_key.pub", 3253, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/scheduler.cf", 1583, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/site.cf", 4117, Change.NEVER),
            Entry.file("cfengine-community/common/1.0/update.cf", 17707, Change.NEVER),
            Entry.file("cfengine-community/common/cron/rudder-agent-community-cron", 539, Change.NEVER),
            Entry.file("cfengine-community/failsafe.cf", 3760, Change.NEVER),
            Entry.file("cfengine-community/inventory/1.0/fusionAgent.cf", 12582, Change.NEVER),
            Entry.file("cfengine-community/inventory/1.0/test-inventory.pl", 2725, Change.NEVER),
            Entry.file("cfengine-community/packageManagement/1.0/packageManagement.cf", 6806, Change.NEVER),
            Entry.file("cfengine-community/promises.cf", 22466, Change.NEVER),
            Entry.file("cfengine-community/properties.d/properties.json", 23, Change.NEVER),
            Entry.file("cfengine-community/rudder-directives.cf", 3134, Change.EACH_GENERATION),
            Entry.file("cfengine-community/rudder-directives.csv", 414, Change.EACH_GENERATION),
            Entry.file("cfengine-community/rudder-parameters.json", 102, Change.NEVER),
            Entry.file("cfengine-community/rudder-promises-generated", 14, Change.EACH_GENERATION),
            Entry.file("cfengine-community/rudder-system-directives-end.cf", 1395, Change.EACH_GENERATION),
            Entry.file("cfengine-community/rudder-system-directives.cf", 1187, Change.EACH_GENERATION),
            Entry.file("cfengine-community/rudder-vars.json", 444, Change.EACH_GENERATION),
            Entry.file("cfengine-community/rudder.json", 5319, Change.EACH_GENERATION),
            Entry.file("cfengine-community/rudder_promises_generated", 14, Change.EACH_GENERATION),
            Entry.file("cfengine-community/run_interval", 2, Change.NEVER));

    /** The directories under {@code rules/} that hold {@link #RUDDER_ENTRIES}, parents first. */
    static final List<String> RUDDER_DIRECTORIES = directories(RUDDER_ENTRIES);

    /** The words generated text is made of: CFEngine-like, so that it compresses about as policy text does. */
    private static final String[] WORDS = ("bundle agent common edit_line body classes vars methods reports files "
            + "commands string slist data usebundle => ; { } ( ) \"${sys.workdir}\" \"${node.properties}\" if "
            + "unless ifvarclass comment handle promise_kept repaired not_kept expression or and not any linux "
            + "perms create edit_defaults copy_from action inherit true false \"0600\" \"root\" \"/var/rudder\" "
            + "rudder_common_report policy_server report_data directive_id technique_name component_key").split(" ");

    private final String option;

    NodeTree(String option) {
        this.option = option;
    }

    /** @return its name as {@code --node-tree} takes it */
    String option() {
        return option;
    }

    /** @return {@code --node-tree}'s value as a shape */
    static NodeTree parse(String value) {
        for (NodeTree tree : values()) {
            if (tree.option.equals(value)) {
                return tree;
            }
        }
        throw new IllegalArgumentException("--node-tree is small or rudder, not '" + value + "'");
    }

    /**
     * @return the entries of a node's directory in the share: itself, {@code rules/}, rudder.tar.bz2 and what
     *     {@link #write} puts beside it
     */
    int entriesPerNode() {
        return switch (this) {
            case SMALL -> 3 + 1 + 3;
            case RUDDER -> 3 + RUDDER_DIRECTORIES.size() + RUDDER_ENTRIES.size();
        };
    }

    /**
     * @param policyBytes each rudder.tar.bz2's size
     * @return what a node's {@code rules/} holds, for the report
     */
    String describe(int policyBytes) {
        return switch (this) {
            case SMALL -> String.format(Locale.ROOT, "rudder.tar.bz2 of %,d B, 3 small files", policyBytes);
            case RUDDER -> {
                List<Entry> changing = RUDDER_ENTRIES.stream().filter(e -> e.change() == Change.EACH_GENERATION)
                        .toList();
                yield String.format(Locale.ROOT, "rudder.tar.bz2 of %,d B, and %d files in %d directories, "
                        + "Rudder's fixture %s's shape (`--node-tree rudder`: its names and sizes, %,d B, one "
                        + "file a symbolic link); %d of them (%,d B: the node's directives, rudder.json, the "
                        + "generation's stamps) with new content each generation, the other %d rewritten with "
                        + "the same content", policyBytes, RUDDER_ENTRIES.size(), RUDDER_DIRECTORIES.size(),
                        FIXTURE, bytes(RUDDER_ENTRIES), changing.size(), bytes(changing),
                        RUDDER_ENTRIES.size() - changing.size());
            }
        };
    }

    private static int bytes(List<Entry> entries) {
        return entries.stream().mapToInt(Entry::bytes).sum();
    }

    /** Writes this shape's files (all but rudder.tar.bz2) into one node's new {@code rules/}. */
    @FunctionalInterface
    interface Writer {
        /**
         * @param rules the node's {@code rules.new}, which exists
         * @param nodeId the node
         */
        void write(Path rules, String nodeId) throws IOException;
    }

    /**
     * @param generation the generation every node's tree is written for
     * @return what writes it: the text every node's files share is made once, here
     */
    Writer writer(int generation) {
        return switch (this) {
            case SMALL -> (rules, nodeId) -> {
                Files.createDirectories(rules.resolve("cfengine-community"));
                Files.writeString(rules.resolve("cfengine-community/promises.cf"),
                        "bundle agent main { } # generation " + generation + "\n");
                Files.writeString(rules.resolve("cfengine-community/rudder-promises-generated"), generation + "\n");
                Files.writeString(rules.resolve("cfengine-community/rudder.json"),
                        "{\"RUDDER_NODE_ID\": \"" + nodeId + "\", \"generation\": " + generation + "}\n");
            };
            case RUDDER -> rudderWriter(generation);
        };
    }

    private static Writer rudderWriter(int generation) {
        // Each file's text is the same on every node (as the archive's filler): seeded by the file, and by the
        // generation where the file changes.
        List<byte[]> texts = new ArrayList<>();
        for (int i = 0; i < RUDDER_ENTRIES.size(); i++) {
            Entry entry = RUDDER_ENTRIES.get(i);
            long seed = entry.change() == Change.EACH_GENERATION ? ((long) generation << 32) | i : i;
            texts.add(entry.linkTarget() != null ? null : text(entry.bytes(), seed));
        }
        return (rules, nodeId) -> {
            for (String directory : RUDDER_DIRECTORIES) {
                Files.createDirectories(rules.resolve(directory));
            }
            for (int i = 0; i < RUDDER_ENTRIES.size(); i++) {
                Entry entry = RUDDER_ENTRIES.get(i);
                Path file = rules.resolve(entry.path());
                if (entry.linkTarget() != null) {
                    Files.createSymbolicLink(file, Path.of(entry.linkTarget()));
                    continue;
                }
                String head = entry.change() == Change.EACH_GENERATION
                        ? "# " + nodeId + " generation " + generation + "\n" : "# " + nodeId + "\n";
                Files.write(file, content(head, texts.get(i)));
            }
        };
    }

    /**
     * @return {@code head} then {@code text}, as long as {@code text}; a file shorter than its head holds the head's
     *     end (rudder-promises-generated's 14 B: "generation N" and the line's end)
     */
    static byte[] content(String head, byte[] text) {
        byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
        byte[] content = text.clone();
        int from = Math.max(0, headBytes.length - content.length);
        System.arraycopy(headBytes, from, content, 0, headBytes.length - from);
        return content;
    }

    /** @return {@code size} bytes of generated text: lines of {@link #WORDS}, indented */
    static byte[] text(int size, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        StringBuilder text = new StringBuilder(size + 80);
        while (text.length() < size) {
            int lineEnd = text.length() + 30 + random.nextInt(60);
            text.append("  ".repeat(random.nextInt(4)));
            while (text.length() < lineEnd) {
                text.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
            }
            text.setCharAt(text.length() - 1, '\n');
        }
        return text.substring(0, size).getBytes(StandardCharsets.US_ASCII);
    }

    private static List<String> directories(List<Entry> entries) {
        TreeSet<String> directories = new TreeSet<>();
        for (Entry entry : entries) {
            for (Path parent = Path.of(entry.path()).getParent(); parent != null; parent = parent.getParent()) {
                directories.add(parent.toString());
            }
        }
        return List.copyOf(directories);
    }
}
