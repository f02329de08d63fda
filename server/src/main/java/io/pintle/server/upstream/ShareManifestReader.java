package io.pintle.server.upstream;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.pintle.api.dto.Manifest;
import io.pintle.client.DirectorySync;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Reads a share's manifest (whole, or a change list) as a stream, handing out one top-level directory at a time
 * with its own manifest, so that a relay holds one node's entries at a time (a batch of them while it syncs), not
 * the whole share's: 250,000 entries for 5,000 Rudder nodes.
 *
 * <p>Entries come in manifest order (sorted by whole path), where a top-level directory's entries are contiguous
 * from its first {@code name/...} entry, though others may sort between the directory's own entry and them ({@code
 * a-b} sorts between {@code a} and {@code a/x}). A directory is complete, and handed out, once an entry sorts
 * after {@code name/} without starting with it, or at the end; an entry of a directory handed out already is a
 * manifest out of order, refused.
 */
final class ShareManifestReader {
    /** A manifest's fields other than its entries. */
    record Header(String etag, String since, List<String> removed) {
        boolean isChangeList() {
            return since != null;
        }
    }

    /** Receives each top-level directory read. */
    @FunctionalInterface
    interface Visitor {
        /**
         * @param name the top-level directory's name
         * @param manifest its own manifest (paths relative to it, its ETag as the server's manifest of it has it)
         */
        void directory(String name, Manifest manifest) throws IOException, InterruptedException;
    }

    /** The JSON is no manifest, or not in manifest order (a parse error is Jackson's own exception). */
    static final class InvalidManifestException extends IOException {
        private static final long serialVersionUID = 1L;

        InvalidManifestException(String message) {
            super(message);
        }
    }

    /** A top-level directory being read. */
    private static final class Group {
        final String name;
        final String prefix;
        final List<Manifest.Entry> entries = new ArrayList<>();

        Group(String name) {
            this.name = name;
            this.prefix = name + "/";
        }
    }

    private final ObjectMapper json;
    private final ObjectReader entryReader;

    ShareManifestReader(ObjectMapper json) {
        this.json = json;
        // A newer server's fields are skipped, as the manifest's own unknown fields are.
        this.entryReader = json.readerFor(Manifest.Entry.class)
                .without(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    }

    /**
     * @param input the manifest's JSON
     * @param wanted which top-level directories to hand out (others are skipped, not held)
     * @param visitor gets each, complete, in manifest order of their completion
     * @return the manifest's other fields
     * @throws InvalidManifestException if the JSON is no manifest, or out of order
     * @throws com.fasterxml.jackson.core.JsonProcessingException if it is no JSON, or an entry no entry
     * @throws IOException what the visitor throws
     * @throws InterruptedException if the visitor was interrupted
     */
    Header read(InputStream input, Predicate<String> wanted, Visitor visitor)
            throws IOException, InterruptedException {
        String etag = null;
        String since = null;
        List<String> removed = null;
        try (JsonParser parser = json.getFactory().createParser(input)) {
            expect(parser.nextToken(), JsonToken.START_OBJECT, "an object");
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String field = parser.currentName();
                JsonToken value = parser.nextToken();
                switch (field) {
                    case "etag" -> etag = text(parser, value, field);
                    case "since" -> since = text(parser, value, field);
                    case "removed" -> removed = names(parser, value);
                    case "entries" -> entries(parser, value, wanted, visitor);
                    default -> parser.skipChildren();
                }
            }
            expect(parser.currentToken(), JsonToken.END_OBJECT, "the end of the object");
        }
        if (etag == null) {
            throw new InvalidManifestException("the manifest has no etag");
        }
        if ((since == null) != (removed == null)) {
            throw new InvalidManifestException("a change list has both since and removed, a whole manifest neither");
        }
        return new Header(etag, since, removed);
    }

    private void entries(JsonParser parser, JsonToken start, Predicate<String> wanted, Visitor visitor)
            throws IOException, InterruptedException {
        expect(start, JsonToken.START_ARRAY, "an array of entries");
        Map<String, Group> open = new LinkedHashMap<>();
        Set<String> done = new HashSet<>();
        while (parser.nextToken() == JsonToken.START_OBJECT) {
            Manifest.Entry entry = entryReader.readValue(parser);
            String path = entry.path();
            for (Iterator<Group> groups = open.values().iterator(); groups.hasNext(); ) {
                Group group = groups.next();
                if (path.compareTo(group.prefix) > 0 && !path.startsWith(group.prefix)) {
                    groups.remove();
                    done.add(group.name);
                    hand(group, visitor);
                }
            }
            int slash = path.indexOf('/');
            String top = slash < 0 ? path : path.substring(0, slash);
            if (done.contains(top)) {
                throw new InvalidManifestException("the manifest is not in manifest order: " + path
                        + " after the rest of " + top);
            }
            Group group = open.get(top);
            if (group == null) {
                if (slash >= 0 || !entry.isDirectory() || !wanted.test(top)) {
                    continue; // not a wanted directory (or, below one, its own entry missing: not a directory)
                }
                open.put(top, new Group(top));
            }
            open.get(top).entries.add(entry);
        }
        expect(parser.currentToken(), JsonToken.END_ARRAY, "the end of the entries");
        for (Group group : open.values()) {
            hand(group, visitor);
        }
    }

    private static void hand(Group group, Visitor visitor) throws IOException, InterruptedException {
        Manifest whole = new Manifest(Manifest.FORMAT, "", 0, 0, group.entries);
        Manifest own = DirectorySync.subtreeManifests(whole, Set.of(group.name)).get(group.name);
        visitor.directory(group.name, own);
    }

    private static List<String> names(JsonParser parser, JsonToken start) throws IOException {
        expect(start, JsonToken.START_ARRAY, "an array of names");
        List<String> names = new ArrayList<>();
        while (parser.nextToken() == JsonToken.VALUE_STRING) {
            names.add(parser.getText());
        }
        expect(parser.currentToken(), JsonToken.END_ARRAY, "the end of the names");
        return names;
    }

    private static String text(JsonParser parser, JsonToken value, String field) throws IOException {
        expect(value, JsonToken.VALUE_STRING, "a string for " + field);
        return parser.getText();
    }

    private static void expect(JsonToken token, JsonToken expected, String what) throws IOException {
        if (token != expected) {
            throw new InvalidManifestException("the manifest is not valid: " + what + " expected, " + token
                    + " found");
        }
    }
}
