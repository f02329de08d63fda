package io.pintle.bench.sync;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;

/**
 * A generated tree shaped like what a Rudder agent syncs: {@code rules/cfengine-community/...} (the node's
 * policies: a few fixed files, techniques in {@code <name>/<version>/} directories) and {@code ncf/common/...},
 * {@code ncf/local/...} (the method library), with text-like content and the two relative symbolic links Rudder
 * trees have ({@code certs/policy-server.pem → root.pem}, and the legacy {@code rudder_promises_generated}).
 *
 * <p>The same seed and file count give the same paths and bytes. Sizes follow a log-normal law whose mean is the
 * reference's (about 3.3 MB per 400 files, {@code rudder-domain.md} §1.6).
 *
 * @param root the tree's directory
 * @param files the regular files and symbolic links, relative, {@code /}-separated, sorted
 * @param symlinks the relative paths of the symbolic links (a subset of {@code files})
 */
record RudderTree(Path root, List<String> files, List<String> symlinks) {
    /** Mean file size: 3.3 MB over 400 files in the reference. */
    private static final double MEAN_BYTES = 3_300_000.0 / 400;
    /** Spread of the log-normal size law: most files a few KB, a few tens of KB. */
    private static final double SIGMA = 1.0;
    /** No file below this (a run_interval, a flag file) ... */
    private static final int MIN_BYTES = 16;
    /** ... or above this. */
    private static final int MAX_BYTES = 256 * 1024;
    /** Files per generic-methods directory before it is split, as a large ncf tree would be. */
    private static final int FILES_PER_DIRECTORY = 60;
    /** Share of the files under {@code rules/} (about 120 of 400 in the reference), the rest under {@code ncf/}. */
    private static final double RULES_SHARE = 0.3;

    private static final String[] WORDS = {
        "bundle", "agent", "vars", "classes", "methods", "files", "commands", "reports", "string", "slist", "usebundle",
        "ifvarclass", "if", "unless", "policy_server", "rudder", "ncf", "directive", "technique", "rule", "node",
        "file_present", "file_absent", "package_present", "service_started", "service_restart", "condition_from",
        "command_execution", "user_present", "group_present", "permissions", "file_lines_present", "file_template",
        "sharedfile_from_node", "variable_string", "variable_dict", "kernel_module", "sysctl_value", "audit",
        "enforce", "report_data", "log_rudder", "_method_reporting_context", "class_prefix", "canonify", "repaired",
        "kept", "error", "not_applicable", "${report_data.directive_id}", "${sys.workdir}", "${g.uuid}", "linux",
        "debian", "redhat", "windows", "any", "true", "false", "=>", "{", "}", ";", ",", "\"", "edit_line",
        "insert_lines", "delete_lines", "replace_patterns", "field_edits", "body", "perms", "mog", "0644", "root",
    };
    private static final String[] TECHNIQUES = {
        "clockConfiguration", "fileTemplate", "packageManagement", "userManagement", "sshConfiguration",
        "sudoParameters", "motdConfiguration", "cronConfiguration", "serviceManagement", "checkGenericFileContent",
        "groupManagement", "routeManagement", "dnsConfiguration", "ntpConfiguration", "aptConfiguration",
    };
    private static final String[] NCF_CATEGORIES = {
        "10_ncf_internals", "20_cfe_basics", "30_generic_methods", "40_it_ops_knowledge", "60_services",
    };

    /**
     * Writes the tree.
     *
     * @param root where (created; must not exist or be empty)
     * @param fileCount how many regular files
     * @param seed the generator's seed
     * @return the tree
     * @throws IOException on write errors
     */
    static RudderTree generate(Path root, int fileCount, long seed) throws IOException {
        if (fileCount < 20) {
            throw new IllegalArgumentException("at least 20 files, not " + fileCount);
        }
        Random random = new Random(seed);
        List<String> regular = new ArrayList<>();
        String policies = "rules/cfengine-community/";
        for (String fixed : List.of("promises.cf", "failsafe.cf", "rudder.json", "rudder-directives.csv",
                "rudder-parameters.json", "rudder-promises-generated", "run_interval", "certs/root.pem",
                "properties.d/properties.json", "common/1.0/update.cf", "common/1.0/cf-serverd.cf",
                "common/1.0/site.cf", "common/1.0/rudder-system-directives.cf")) {
            regular.add(policies + fixed);
        }
        regular.add("ncf/common/ncf_hash_file");
        regular.add("ncf/local/ncf_hash_file");
        int rulesTarget = (int) Math.round(fileCount * RULES_SHARE);
        int technique = 0;
        while (regular.size() < rulesTarget) {
            String name = TECHNIQUES[technique % TECHNIQUES.length]
                    + (technique >= TECHNIQUES.length ? "_" + technique / TECHNIQUES.length : "");
            String version = (1 + random.nextInt(4)) + "." + random.nextInt(3);
            int inTechnique = 1 + random.nextInt(6);
            for (int i = 0; i < inTechnique && regular.size() < rulesTarget; i++) {
                regular.add(policies + name + "/" + version + "/" + (i == 0 ? "main" : nameWord(random) + "_" + i)
                        + ".cf");
            }
            technique++;
        }
        int ncfLocal = Math.max(1, (fileCount - regular.size()) / 10);
        for (int i = 0; regular.size() < fileCount && i < ncfLocal; i++) {
            regular.add("ncf/local/50_techniques/technique_" + i / 3 + "/1.0/technique_" + i + ".cf");
        }
        int index = 0;
        while (regular.size() < fileCount) {
            String category = NCF_CATEGORIES[index % NCF_CATEGORIES.length];
            int perCategory = index / NCF_CATEGORIES.length;
            String directory = "ncf/common/" + category + "/";
            if (category.equals("60_services")) {
                directory += "service_" + perCategory / 8 + "/";
            } else if (perCategory >= FILES_PER_DIRECTORY) {
                directory += "part_" + perCategory / FILES_PER_DIRECTORY + "/";
            }
            regular.add(directory + nameWord(random) + "_" + index + ".cf");
            index++;
        }
        Files.createDirectories(root);
        for (String path : regular) {
            Path file = root.resolve(path);
            Files.createDirectories(file.getParent());
            Files.writeString(file, content(random, path, size(random)));
        }
        List<String> links = List.of(policies + "certs/policy-server.pem", policies + "rudder_promises_generated");
        Files.createSymbolicLink(root.resolve(links.get(0)), Path.of("root.pem"));
        Files.createSymbolicLink(root.resolve(links.get(1)), Path.of("rudder-promises-generated"));
        List<String> all = new ArrayList<>(regular);
        all.addAll(links);
        all.sort(Comparator.naturalOrder());
        return new RudderTree(root, List.copyOf(all), links);
    }

    /**
     * Rewrites {@code count} files, each through a temporary file renamed over it, as Rudder's policy writer does.
     * The new content is the old one plus a line naming the round, so every changed file also changes size (see
     * docs/BENCHMARKS.md: nginx's ETag is mtime in seconds plus size).
     *
     * @param count how many files
     * @param round which round (picks the files and the line)
     * @return the changed files' relative paths
     * @throws IOException on write errors
     */
    List<String> change(int count, int round) throws IOException {
        List<String> candidates = new ArrayList<>(files);
        candidates.removeAll(symlinks);
        candidates.remove("rules/cfengine-community/certs/root.pem");
        Random random = new Random(root.toString().hashCode() * 31L + round);
        List<String> changed = new ArrayList<>();
        while (changed.size() < count) {
            String path = candidates.remove(random.nextInt(candidates.size()));
            Path file = root.resolve(path);
            Path temporary = file.resolveSibling("." + file.getFileName() + ".new");
            String content = Files.readString(file) + "# regenerated, round " + round + "\n";
            Files.writeString(temporary, content);
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            changed.add(path);
        }
        return changed;
    }

    /** @return the total size of the regular files, in bytes */
    long bytes() {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(path -> Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS))
                    .mapToLong(path -> {
                        try {
                            return Files.size(path);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    })
                    .sum();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the size of the regular files' contents, concatenated in path order and gzipped */
    long gzipBytes() {
        CountingStream counter = new CountingStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(counter)) {
            for (String path : files) {
                if (!symlinks.contains(path)) {
                    Files.copy(root.resolve(path), gzip);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return counter.count;
    }

    /** Counts the bytes written to it and drops them. */
    private static final class CountingStream extends OutputStream {
        private long count;

        @Override
        public void write(int b) {
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            count += len;
        }
    }

    /** @return how many directories the tree has, itself excluded */
    long directories() throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(path -> Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)).count() - 1;
        }
    }

    private static int size(Random random) {
        double mu = Math.log(MEAN_BYTES) - SIGMA * SIGMA / 2;
        double size = Math.exp(mu + SIGMA * random.nextGaussian());
        return (int) Math.max(MIN_BYTES, Math.min(MAX_BYTES, size));
    }

    /** A word fit for a file name. */
    private static String nameWord(Random random) {
        String word;
        do {
            word = word(random);
        } while (!word.matches("[a-z][a-z_]*"));
        return word;
    }

    private static String word(Random random) {
        return WORDS[random.nextInt(WORDS.length)];
    }

    /** CFEngine-looking lines: keywords, identifiers and a hex id now and then, so it compresses like policies. */
    private static String content(Random random, String path, int size) {
        StringBuilder text = new StringBuilder(size + 80);
        text.append("# ").append(path).append(", generated by the Pintle sync benchmark\n");
        while (text.length() < size) {
            int indent = random.nextInt(3) * 2;
            text.append(" ".repeat(indent));
            int words = 2 + random.nextInt(8);
            for (int i = 0; i < words; i++) {
                if (random.nextInt(12) == 0) {
                    text.append(String.format(Locale.ROOT, "%08x", random.nextInt()));
                } else {
                    text.append(word(random));
                }
                text.append(i + 1 < words ? " " : "\n");
            }
        }
        text.setLength(size - 1);
        return text.append('\n').toString();
    }
}
