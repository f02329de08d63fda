package io.pintle.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packages under {@code io.pintle.server} form a graph without cycles, so each can be read, tested and moved
 * with only what lies below it. A directory is a package; a dependency is an import or a fully qualified name in
 * code (comments and string literals do not count). The root package (Main, Bootstrap: the composition root) is
 * left out: it depends on everything by design.
 */
class PackageCycleTest {
    private static final Path MAIN = Path.of("src/main/java/io/pintle/server");
    private static final String ROOT = "io.pintle.server.";
    private static final Pattern REFERENCE = Pattern.compile("\\bio\\.pintle\\.server\\.([A-Za-z_][\\w.]*)");
    /** More cycles than this in one strongly connected part are summarised: fix the first ones, run again. */
    private static final int MAX_CYCLES_SHOWN = 40;

    @Test
    void packagesDependOnEachOtherWithoutCycles() throws IOException {
        Graph graph = Graph.read(MAIN);
        List<String> cycles = graph.cycles();
        assertThat(cycles)
                .as("package cycles under io.pintle.server (a -> b: a file of a names a class of b):%n  %s",
                        String.join("\n  ", cycles))
                .isEmpty();
    }

    @Test
    void theGraphIsReadFromImportsAndQualifiedNames() throws IOException {
        Graph graph = Graph.read(MAIN);
        // Guards against a test that passes because it read nothing: the snapshot holds the node registry.
        assertThat(graph.edges.getOrDefault("reload", new TreeMap<>())).containsKey("nodes");
        assertThat(graph.edges).doesNotContainKey("");
    }

    @Test
    void aCycleIsNamedWithTheFilesThatMakeIt() {
        Graph graph = new Graph(Set.of("a", "b", "c", "d"));
        graph.add("a", "b", "a/A.java: b.B");
        graph.add("b", "c", "b/B.java: c.C");
        graph.add("c", "a", "c/C.java: a.A");
        graph.add("c", "d", "c/C.java: d.D");
        assertThat(graph.cycles()).containsExactly(
                "a -> b -> c -> a  [a/A.java: b.B; b/B.java: c.C; c/C.java: a.A]");
    }

    @Test
    void commentsAndStringsAreNotDependencies() {
        String source = """
                package x;
                /** See {@link io.pintle.server.a.A}. */
                class X { String s = "io.pintle.server.b.B"; // io.pintle.server.c.C
                    char q = '"'; io.pintle.server.d.D d; }
                """;
        assertThat(Graph.references(source)).containsExactly("d.D");
    }

    /** Packages (relative to the root, dotted) and who depends on whom, with one example reference per edge. */
    static final class Graph {
        final Set<String> packages;
        final SortedMap<String, SortedMap<String, String>> edges = new TreeMap<>();

        Graph(Set<String> packages) {
            this.packages = Set.copyOf(packages);
        }

        static Graph read(Path main) throws IOException {
            List<Path> dirs;
            try (Stream<Path> walk = Files.walk(main)) {
                dirs = walk.filter(Files::isDirectory).filter(dir -> !dir.equals(main)).toList();
            }
            Map<Path, String> names = new HashMap<>();
            for (Path dir : dirs) {
                names.put(dir, main.relativize(dir).toString().replace(main.getFileSystem().getSeparator(), "."));
            }
            Graph graph = new Graph(Set.copyOf(names.values()));
            for (Path dir : dirs) {
                String from = names.get(dir);
                List<Path> files;
                try (Stream<Path> list = Files.list(dir)) {
                    files = list.filter(f -> f.toString().endsWith(".java")).sorted().toList();
                }
                for (Path file : files) {
                    for (String reference : references(Files.readString(file))) {
                        String to = graph.packageOf(reference);
                        if (to != null && !to.equals(from)) {
                            graph.add(from, to, main.relativize(file) + ": " + reference);
                        }
                    }
                }
            }
            return graph;
        }

        void add(String from, String to, String evidence) {
            edges.computeIfAbsent(from, k -> new TreeMap<>()).putIfAbsent(to, evidence);
        }

        /** @return the longest package that prefixes a dotted reference, or null for the root package */
        String packageOf(String reference) {
            String candidate = reference;
            while (!candidate.isEmpty()) {
                if (packages.contains(candidate)) {
                    return candidate;
                }
                int dot = candidate.lastIndexOf('.');
                candidate = dot < 0 ? "" : candidate.substring(0, dot);
            }
            return null;
        }

        /** @return the names after {@code io.pintle.server.} in code, comments and literals removed */
        static List<String> references(String source) {
            Matcher matcher = REFERENCE.matcher(code(source));
            List<String> found = new ArrayList<>();
            while (matcher.find()) {
                String name = matcher.group(1);
                while (name.endsWith(".")) {
                    name = name.substring(0, name.length() - 1);
                }
                found.add(name);
            }
            return found;
        }

        /** @return the source with comments, string, text block and char literals blanked */
        static String code(String source) {
            StringBuilder out = new StringBuilder(source.length());
            int i = 0;
            int n = source.length();
            while (i < n) {
                char c = source.charAt(i);
                if (source.startsWith("//", i)) {
                    int end = source.indexOf('\n', i);
                    i = end < 0 ? n : end;
                } else if (source.startsWith("/*", i)) {
                    int end = source.indexOf("*/", i + 2);
                    i = end < 0 ? n : end + 2;
                    out.append(' ');
                } else if (source.startsWith("\"\"\"", i)) {
                    int end = source.indexOf("\"\"\"", i + 3);
                    while (end > 0 && source.charAt(end - 1) == '\\') {
                        end = source.indexOf("\"\"\"", end + 1);
                    }
                    i = end < 0 ? n : end + 3;
                    out.append("\"\"");
                } else if (c == '"' || c == '\'') {
                    int j = i + 1;
                    while (j < n && source.charAt(j) != c && source.charAt(j) != '\n') {
                        j += source.charAt(j) == '\\' ? 2 : 1;
                    }
                    i = j + 1;
                    out.append(c).append(c);
                } else {
                    out.append(c);
                    i++;
                }
            }
            return out.toString();
        }

        /**
         * @return every elementary cycle, each once, starting at its smallest package, with the reference that
         *     makes each of its edges
         */
        List<String> cycles() {
            List<String> found = new ArrayList<>();
            for (SortedSet<String> part : stronglyConnected()) {
                List<List<String>> inPart = new ArrayList<>();
                for (String start : part) {
                    Deque<String> path = new ArrayDeque<>(List.of(start));
                    walk(start, start, part, path, inPart);
                }
                for (List<String> cycle : inPart.subList(0, Math.min(inPart.size(), MAX_CYCLES_SHOWN))) {
                    List<String> evidence = new ArrayList<>();
                    for (int k = 0; k + 1 < cycle.size(); k++) {
                        evidence.add(edges.get(cycle.get(k)).get(cycle.get(k + 1)));
                    }
                    found.add(String.join(" -> ", cycle) + "  [" + String.join("; ", evidence) + "]");
                }
                if (inPart.size() > MAX_CYCLES_SHOWN) {
                    found.add("... and " + (inPart.size() - MAX_CYCLES_SHOWN) + " more cycles through " + part);
                }
            }
            return found;
        }

        /** Depth-first from {@code at}, through packages of the part after {@code start} only: each cycle once. */
        private void walk(String start, String at, SortedSet<String> part, Deque<String> path, List<List<String>> out) {
            for (String next : edges.getOrDefault(at, new TreeMap<>()).keySet()) {
                if (next.equals(start)) {
                    List<String> cycle = new ArrayList<>(path);
                    cycle.add(start);
                    out.add(cycle);
                } else if (part.contains(next) && next.compareTo(start) > 0 && !path.contains(next)) {
                    path.addLast(next);
                    walk(start, next, part, path, out);
                    path.removeLast();
                }
            }
        }

        /** @return Tarjan's strongly connected components with more than one package, sorted */
        private List<SortedSet<String>> stronglyConnected() {
            Map<String, Integer> index = new HashMap<>();
            Map<String, Integer> low = new HashMap<>();
            Deque<String> stack = new ArrayDeque<>();
            List<SortedSet<String>> parts = new ArrayList<>();
            for (String pkg : new TreeSet<>(packages)) {
                if (!index.containsKey(pkg)) {
                    connect(pkg, index, low, stack, parts);
                }
            }
            return parts.stream().filter(part -> part.size() > 1)
                    .sorted((x, y) -> x.first().compareTo(y.first()))
                    .collect(Collectors.toList());
        }

        private void connect(String pkg, Map<String, Integer> index, Map<String, Integer> low, Deque<String> stack,
                List<SortedSet<String>> parts) {
            index.put(pkg, index.size());
            low.put(pkg, index.get(pkg));
            stack.push(pkg);
            for (String next : edges.getOrDefault(pkg, new TreeMap<>()).keySet()) {
                if (!index.containsKey(next)) {
                    connect(next, index, low, stack, parts);
                    low.put(pkg, Math.min(low.get(pkg), low.get(next)));
                } else if (stack.contains(next)) {
                    low.put(pkg, Math.min(low.get(pkg), index.get(next)));
                }
            }
            if (low.get(pkg).equals(index.get(pkg))) {
                SortedSet<String> part = new TreeSet<>();
                String member;
                do {
                    member = stack.pop();
                    part.add(member);
                } while (!member.equals(pkg));
                parts.add(part);
            }
        }
    }
}
