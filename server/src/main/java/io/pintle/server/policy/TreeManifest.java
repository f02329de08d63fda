package io.pintle.server.policy;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.pintle.api.dto.Manifest;
import io.pintle.api.dto.ManifestEtag;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes the JSON {@link Manifest} of one {@link TreeVersion} as its tree is walked again, with bounded memory
 * whatever the tree's size: the same bytes as serializing the whole {@code Manifest} record with Jackson, but no
 * entry is held once written. The entries must still be the version's (see {@link TreeScanner#replay}): if the
 * tree changed since it was scanned, the write fails before the closing {@code ]}}, so a reader sees a truncated
 * document, never a manifest that does not match its ETag.
 *
 * <p>Asked {@code ?since=}, it also fingerprints each top-level entry with everything below it and remembers the
 * version in its {@link ManifestHistory}; when it still holds the version named, {@link #changes} reads only the
 * top-level entries whose fingerprint differs (a change list). A top-level entry's entries are held until its
 * fingerprint is known (a node's directory: a handful), at most {@value #MAX_HELD} of them: past that it is
 * written as changed. The changed entries go to a {@link Spool} as JSON (a change list's ETag, which depends on
 * every entry, is sent before them), in the heap while small, else in an unlinked temporary file: a generation's
 * change list of a relay's whole share (5,000 Rudder nodes, 250,000 entries, ~50 MB) is not held as objects.
 */
public final class TreeManifest {
    /** Turns the generator's 8 KB flushes into 64 KiB writes to the response. */
    private static final int BUFFER_BYTES = 64 * 1024;

    /** Entries of one top-level entry held until its fingerprint decides whether it changed. */
    static final int MAX_HELD = 4096;

    /** The largest change list spooled: a million entries of 1 KiB. */
    static final long MAX_CHANGE_LIST_BYTES = 1L << 30;

    private final ObjectMapper json = new ObjectMapper();
    // Flushing after every entry would send a frame per entry.
    private final ObjectWriter entries = json.writerFor(Manifest.Entry.class)
            .without(SerializationFeature.FLUSH_AFTER_WRITE_VALUE);
    private final ManifestHistory history;
    private final java.util.function.Supplier<Spool> spools;

    public TreeManifest() {
        this(new ManifestHistory(ManifestHistory.DEFAULT_MAX_NAMES));
    }

    TreeManifest(ManifestHistory history) {
        this(history, () -> Spool.temporary(MAX_CHANGE_LIST_BYTES));
    }

    TreeManifest(ManifestHistory history, java.util.function.Supplier<Spool> spools) {
        this.history = history;
        this.spools = spools;
    }

    /**
     * The whole manifest.
     *
     * @param scanner walks the tree again
     * @param tree the version to describe
     * @param output where the JSON goes; flushed, not closed
     * @throws FileVersion.FileChangedException if the tree is no longer that version
     * @throws IOException if the tree cannot be read or the output fails
     */
    public void write(TreeScanner scanner, TreeVersion tree, OutputStream output) throws IOException {
        JsonGenerator generator = start(tree, null, output);
        scanner.replay(tree, (entry, stat) -> entries.writeValue(generator, entry));
        end(generator, null);
    }

    /**
     * The whole manifest, its version remembered for the next {@code ?since=} (asked with an empty {@code since},
     * or one no longer held: see {@link #changes} for a held one) before the document's end is written.
     *
     * @param scanner walks the tree again
     * @param tree the version to describe
     * @param output where the JSON goes; flushed, not closed
     * @throws FileVersion.FileChangedException if the tree is no longer that version
     * @throws IOException if the tree cannot be read or the output fails
     */
    public void writeRemembered(TreeScanner scanner, TreeVersion tree, OutputStream output) throws IOException {
        JsonGenerator generator = start(tree, null, output);
        TopLevel top = new TopLevel(null, entry -> entries.writeValue(generator, entry));
        scanner.replay(tree, (entry, stat) -> top.accept(entry));
        // Held before the last bytes go: the client may send its next since as soon as it has them.
        history.put(tree.root(), tree.etag(), top.finish());
        end(generator, null);
    }

    /**
     * A change list computed whole before it is sent (its ETag goes first): see {@link #changes}. Its entries are
     * spooled: whoever got it {@link #release}s it once written (or not to be written); one that hands it on to
     * more writers {@link #retain}s it for each.
     *
     * @param version what was read: its ETag, totals, directories
     * @param since the version it is relative to
     * @param entries the JSON of those of the top-level entries that changed, in manifest order, comma-separated
     * @param removed the top-level names gone since
     * @param fingerprints the version's top level, to remember before it is sent
     */
    public record ChangeList(TreeVersion version, String since, Spool entries, List<String> removed,
            ManifestHistory.Fingerprints fingerprints) implements ChangeWaits.Shared {
        /** @return whether another reference was taken (false: released already, not to be written) */
        @Override
        public boolean retain() {
            return entries.retain();
        }

        /** Gives a reference back; the last one frees its spool. */
        @Override
        public void release() {
            entries.release();
        }
    }

    /**
     * @param root a tree's real path
     * @param since one of its versions' ETag
     * @return that version's top level when it is held, else null
     */
    public ManifestHistory.Fingerprints held(Path root, String since) {
        return history.get(root, since);
    }

    /**
     * A change list read in one pass with {@link TreeScanner#walkByTopLevel}: each top-level directory one version
     * of its own, the tree as a whole not checked, so that a tree whose node directories are being replaced one
     * after the other (a generation) still gets an answer. Holds the changed entries, not the tree.
     *
     * @param scanner reads the tree
     * @param root the tree's real path
     * @param since the version asked about
     * @param before its top level ({@link #held})
     * @param watched whether the version must list its directories (for a change wait)
     * @return the change list, to {@link #remember} and then {@link #write(ChangeList, OutputStream)}
     * @throws IOException as {@link TreeScanner#walkByTopLevel}
     */
    public ChangeList changes(TreeScanner scanner, Path root, String since, ManifestHistory.Fingerprints before,
            boolean watched) throws IOException {
        Spool spool = spools.get();
        try {
            JsonGenerator generator = json.getFactory().createGenerator(spool);
            // The entries as the elements of an array, without its brackets: write(ChangeList, ...) adds them.
            generator.setRootValueSeparator(new SerializedString(","));
            TopLevel top = new TopLevel(before, entry -> entries.writeValue(generator, entry));
            TreeVersion version = scanner.walkByTopLevel(root, watched, (entry, stat) -> top.accept(entry));
            ManifestHistory.Fingerprints now = top.finish();
            generator.close();
            return new ChangeList(version, since, spool, removed(before, now), now);
        } catch (IOException | RuntimeException e) {
            spool.release();
            throw e;
        }
    }

    /**
     * @param changes a change list
     * @param output where the JSON goes; flushed, not closed
     * @throws IOException if the output fails
     */
    public void write(ChangeList changes, OutputStream output) throws IOException {
        JsonGenerator generator = start(changes.version(), changes.since(), output);
        // The array's opening bracket into the buffer, before the spooled elements; not sent on its own.
        generator.disable(JsonGenerator.Feature.FLUSH_PASSED_TO_STREAM);
        generator.flush();
        changes.entries().writeTo((OutputStream) generator.getOutputTarget());
        end(generator, changes.removed());
    }

    /**
     * Holds a change list's version for the next {@code since}: before it is written, since the client may ask
     * again as soon as it has read it (a version held that no client got costs memory, never correctness).
     */
    public void remember(ChangeList changes) {
        history.put(changes.version().root(), changes.version().etag(), changes.fingerprints());
    }

    private JsonGenerator start(TreeVersion tree, String since, OutputStream output) throws IOException {
        BufferedOutputStream buffered = new BufferedOutputStream(output, BUFFER_BYTES);
        // Not closed on failure: closing writes the missing brackets and would make a broken document look whole.
        JsonGenerator generator = json.getFactory().createGenerator(buffered);
        generator.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        // The fields in the order of the Manifest record, which is how Jackson writes it.
        generator.writeStartObject();
        generator.writeNumberField("format", Manifest.FORMAT);
        generator.writeStringField("etag", tree.etag());
        if (since != null) {
            generator.writeStringField("since", since);
        }
        generator.writeNumberField("files", tree.files());
        generator.writeNumberField("bytes", tree.bytes());
        generator.writeArrayFieldStart("entries");
        return generator;
    }

    private static void end(JsonGenerator generator, List<String> removed) throws IOException {
        generator.writeEndArray();
        if (removed != null) {
            generator.writeArrayFieldStart("removed");
            for (String name : removed) {
                generator.writeString(name);
            }
            generator.writeEndArray();
        }
        generator.writeEndObject();
        generator.close(); // AUTO_CLOSE_TARGET off: the buffer stays open, and is flushed here
        ((OutputStream) generator.getOutputTarget()).flush();
    }

    private static List<String> removed(ManifestHistory.Fingerprints before, ManifestHistory.Fingerprints now) {
        List<String> removed = new ArrayList<>();
        for (String name : before.names()) {
            if (!now.has(name)) {
                removed.add(name);
            }
        }
        return removed;
    }

    /** Where entries go once their top-level entry is known to have changed. */
    @FunctionalInterface
    interface Sink {
        void write(Manifest.Entry entry) throws IOException;
    }

    /**
     * Groups entries, in manifest order, by top-level entry, and passes on those of the groups that changed, still
     * in manifest order. In manifest order (whole paths sorted) a top-level group is not always contiguous: {@code
     * a-b} and its contents sort between {@code a} and {@code a/x}. What is below {@code a} is contiguous, though,
     * from its first {@code a/...} entry; so a group is complete once an entry sorts after {@code a/} without
     * starting with it, and the groups interleaved with it are complete by then too. Entries are held until their
     * group is complete, then those of the changed groups are passed on in the order they came. A group past
     * {@link #MAX_HELD} entries is passed on as changed, as it comes, with every group open beside it.
     */
    static final class TopLevel {
        private final ManifestHistory.Fingerprints before;
        private final Sink sink;
        private final ManifestHistory.Builder now = new ManifestHistory.Builder();
        private final ArrayDeque<Group> open = new ArrayDeque<>();
        private long sequence;

        TopLevel(ManifestHistory.Fingerprints before, Sink sink) {
            this.before = before;
            this.sink = sink;
        }

        private record Held(long sequence, Manifest.Entry entry) {}

        private static final class Group {
            final String name;
            final String prefix;
            final ManifestEtag etag = new ManifestEtag();
            final List<Held> held = new ArrayList<>();
            boolean complete;
            /** Passed on as it comes, as changed (past {@link #MAX_HELD}, or open beside such a group). */
            boolean streaming;

            Group(String name) {
                this.name = name;
                this.prefix = name + "/";
            }
        }

        void accept(Manifest.Entry entry) throws IOException {
            String path = entry.path();
            int slash = path.indexOf('/');
            String name = slash < 0 ? path : path.substring(0, slash);
            Group group = null;
            boolean streaming = false;
            for (Group candidate : open) {
                if (candidate.name.equals(name)) {
                    group = candidate;
                } else if (!candidate.complete && path.compareTo(candidate.prefix) > 0
                        && !path.startsWith(candidate.prefix)) {
                    candidate.complete = true;
                }
                streaming |= candidate.streaming && !candidate.complete;
            }
            if (group == null) {
                group = new Group(name);
                group.streaming = streaming;
                open.addLast(group);
            }
            group.etag.add(entry);
            if (group.streaming) {
                sink.write(entry);
            } else {
                group.held.add(new Held(sequence++, entry));
            }
            if (slash < 0 && !entry.isDirectory()) {
                group.complete = true; // a file or a link: nothing below it
            }
            drain();
        }

        /** @return the version's fingerprints, every group passed on */
        ManifestHistory.Fingerprints finish() throws IOException {
            for (Group group : open) {
                group.complete = true;
            }
            drain();
            return now.build();
        }

        private void drain() throws IOException {
            List<Held> out = new ArrayList<>();
            while (!open.isEmpty() && open.peekFirst().complete) {
                Group done = open.removeFirst();
                String fingerprint = done.etag.value();
                now.add(done.name, fingerprint);
                if (!done.streaming && (before == null || !before.same(done.name, fingerprint))) {
                    out.addAll(done.held);
                }
            }
            if (!open.isEmpty() && !open.peekFirst().streaming && open.peekFirst().held.size() > MAX_HELD) {
                for (Group group : open) {
                    out.addAll(group.held);
                    group.held.clear();
                    group.streaming = true;
                }
            }
            out.sort((a, b) -> Long.compare(a.sequence(), b.sequence()));
            for (Held held : out) {
                sink.write(held.entry());
            }
        }
    }
}
