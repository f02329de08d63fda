package io.pintle.server.delivery;

import com.github.difflib.DiffUtils;
import com.github.difflib.UnifiedDiffUtils;
import com.github.difflib.patch.Patch;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What differs between two versions of a policy tree: files added, removed and changed, with a unified diff for
 * changed text files. Bounded: trees of at most {@link #MAX_ENTRIES} entries each, text diffs only for files of at
 * most {@link #MAX_TEXT_BYTES}, and at most {@link #MAX_DIFF_CHARS} of diff text in all (the rest marked
 * truncated). A file is unchanged when both names are the same inode (a hard link) or their bytes are equal.
 * Symbolic links compare by target, never followed.
 */
public final class TreeDiff {
    /** Entries per tree beyond which the diff is refused. */
    public static final int MAX_ENTRIES = 100_000;
    /** Larger files are compared but not diffed. */
    public static final int MAX_TEXT_BYTES = 256 * 1024;
    /** Diff text in all, beyond which diffs are left out. */
    public static final int MAX_DIFF_CHARS = 512 * 1024;
    private static final int CONTEXT_LINES = 3;

    private TreeDiff() {}

    /**
     * One changed file.
     *
     * @param path its path below the tree's root
     * @param binary whether it is not text (no diff)
     * @param diff its unified diff, or null (binary, too large, or over the total bound)
     * @param truncated whether a diff was left out for a bound
     */
    public record Change(String path, boolean binary, String diff, boolean truncated) {}

    /**
     * @param added paths only in the newer tree
     * @param removed paths only in the older tree
     * @param changed paths in both whose content differs
     * @param unchanged how many are in both, identical
     * @param truncated whether any diff was left out for a bound
     */
    public record Result(List<String> added, List<String> removed, List<Change> changed, int unchanged,
            boolean truncated) {
        public Result {
            added = List.copyOf(added);
            removed = List.copyOf(removed);
            changed = List.copyOf(changed);
        }
    }

    /**
     * @param older the tree as it was (may be absent: everything is added)
     * @param newer the tree as it is (may be absent: everything is removed)
     * @return the differences
     * @throws IOException when a tree cannot be read or is larger than the bound
     */
    public static Result compare(Path older, Path newer) throws IOException {
        SortedMap<String, Entry> before = entries(older);
        SortedMap<String, Entry> after = entries(newer);
        List<String> added = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        List<Change> changed = new ArrayList<>();
        int unchanged = 0;
        int budget = MAX_DIFF_CHARS;
        boolean truncated = false;
        for (String path : before.keySet()) {
            if (!after.containsKey(path)) {
                removed.add(path);
            }
        }
        for (var item : after.entrySet()) {
            Entry old = before.get(item.getKey());
            if (old == null) {
                added.add(item.getKey());
                continue;
            }
            Entry now = item.getValue();
            if (same(old, now)) {
                unchanged++;
                continue;
            }
            Change change = change(item.getKey(), old, now, budget);
            budget -= change.diff() != null ? change.diff().length() : 0;
            truncated |= change.truncated();
            changed.add(change);
        }
        return new Result(added, removed, changed, unchanged, truncated);
    }

    /** A file or link of a tree. */
    private record Entry(Path path, boolean link, Object key, long size) {}

    private static SortedMap<String, Entry> entries(Path root) throws IOException {
        SortedMap<String, Entry> entries = new TreeMap<>();
        if (root == null || !Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
            return entries;
        }
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (attrs.isRegularFile() || attrs.isSymbolicLink()) {
                    if (entries.size() >= MAX_ENTRIES) {
                        throw new IOException(root + " has more than " + MAX_ENTRIES + " files");
                    }
                    entries.put(root.relativize(file).toString(),
                            new Entry(file, attrs.isSymbolicLink(), attrs.fileKey(), attrs.size()));
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return entries;
    }

    private static boolean same(Entry old, Entry now) throws IOException {
        if (old.link() || now.link()) {
            return old.link() && now.link()
                    && Files.readSymbolicLink(old.path()).equals(Files.readSymbolicLink(now.path()));
        }
        if (old.key() != null && Objects.equals(old.key(), now.key())) {
            return true;
        }
        return old.size() == now.size() && Files.mismatch(old.path(), now.path()) == -1L;
    }

    private static Change change(String path, Entry old, Entry now, int budget) throws IOException {
        if (old.link() != now.link()) {
            return new Change(path, true, null, false);
        }
        if (old.link()) {
            String diff = "-> " + Files.readSymbolicLink(old.path()) + "\n+> " + Files.readSymbolicLink(now.path())
                    + "\n";
            return new Change(path, false, diff, false);
        }
        if (old.size() > MAX_TEXT_BYTES || now.size() > MAX_TEXT_BYTES) {
            return new Change(path, false, null, true);
        }
        List<String> before = text(Files.readAllBytes(old.path()));
        List<String> after = text(Files.readAllBytes(now.path()));
        if (before == null || after == null) {
            return new Change(path, true, null, false);
        }
        Patch<String> patch = DiffUtils.diff(before, after);
        String diff = String.join("\n", UnifiedDiffUtils.generateUnifiedDiff("a/" + path, "b/" + path, before,
                patch, CONTEXT_LINES)) + "\n";
        if (diff.length() > budget) {
            return new Change(path, false, null, true);
        }
        return new Change(path, false, diff, false);
    }

    /** @return the lines of UTF-8 text without NUL, or null when the bytes are not that */
    private static List<String> text(byte[] bytes) {
        for (byte b : bytes) {
            if (b == 0) {
                return null;
            }
        }
        try {
            String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
            return Arrays.asList(text.split("\n", -1));
        } catch (CharacterCodingException binary) {
            return null;
        }
    }
}
