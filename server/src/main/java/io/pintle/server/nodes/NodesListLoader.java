package io.pintle.server.nodes;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.ByteArrayInputStream;
import java.io.CharConversionException;
import java.io.IOException;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Reads Rudder's {@code nodeslist.json}: {@code {"<id>": {"hostname", "key-hash", "policy-server"}}}, listing
 * every node below this server. A missing or malformed {@code key-hash} is ignored, as relayd does; a missing
 * {@code hostname} or {@code policy-server}, or a malformed id, is an error naming the node. Unknown fields are
 * ignored so that newer Rudder versions can add some.
 *
 * <p>A root's list has an entry per node of the fleet and changes by one entry when a node is accepted. Given the
 * previous load, entries whose bytes did not change are reused without being parsed; only the others go through
 * the JSON parser. Anything unexpected on that path (the structure between entries, an entry that does not parse)
 * falls back to parsing the whole file, so that the result and the error messages are always those of a full
 * parse.
 */
public final class NodesListLoader {
    private static final JsonFactory JSON = new JsonFactory();
    private static final byte[] OPEN_OBJECT = {'{'};
    /** Entries parsed one by one, beyond which a whole parse is cheaper: this many plus a quarter of the list. */
    private static final int INCREMENTAL_LIMIT = 64;

    private NodesListLoader() {}

    /**
     * @param file the nodes list
     * @return its entries
     * @throws IOException naming the file and the entry when it cannot be read or is invalid
     */
    public static List<Node> load(Path file) throws IOException {
        try {
            return parse(Files.readAllBytes(file), file);
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        }
    }

    /**
     * @param content the file's bytes
     * @param file its name, for messages
     * @return its entries
     * @throws IOException naming the file and the entry when it is invalid
     */
    public static List<Node> parse(byte[] content, Path file) throws IOException {
        return parseAll(content, file).nodes();
    }

    /**
     * @param content the file's bytes; the result keeps them
     * @param file its name, for messages
     * @param previous the previous load of this file, whose unchanged entries are reused ({@link NodesList#EMPTY}
     *     for none)
     * @return its entries, equal to what a parse from scratch gives
     * @throws IOException naming the file and the entry when it is invalid
     */
    public static NodesList parse(byte[] content, Path file, NodesList previous) throws IOException {
        if (previous.spans().size() > 0) {
            NodesList reused = reuse(content, file, previous);
            if (reused != null) {
                return reused;
            }
        }
        return parseAll(content, file);
    }

    private static NodesList parseAll(byte[] content, Path file) throws IOException {
        // Streamed rather than read as a tree: one Node per entry, nothing else kept.
        Entries entries = new Entries(1024);
        try (JsonParser parser = JSON.createParser(content)) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                throw new IOException(file + ": empty file (expected a JSON object, {} for no nodes)");
            }
            if (first != JsonToken.START_OBJECT) {
                throw new IOException(file + ": expected a JSON object keyed by node id");
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                long start = parser.currentTokenLocation().getByteOffset();
                Node node = readEntry(parser, file);
                entries.add(start, parser.currentLocation().getByteOffset(), node, content);
            }
            if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
                throw new IOException(file + ": invalid JSON: unexpected content after the nodes object");
            }
        } catch (JsonProcessingException e) {
            throw new IOException(file + ": invalid JSON: " + JsonMessages.describe(e, JSON.streamReadConstraints()), e);
        } catch (CharConversionException e) {
            // Jackson detects UTF-16 and UTF-32 from the first bytes; invalid characters there are not a
            // JsonProcessingException and their message does not name the file.
            throw new IOException(file + ": invalid JSON: " + e.getMessage(), e);
        }
        return entries.build(content);
    }

    /**
     * Reads one entry, the parser being on its id; leaves the parser on the entry's closing brace.
     */
    private static Node readEntry(JsonParser parser, Path file) throws IOException {
        String id = parser.currentName();
        if (parser.nextToken() != JsonToken.START_OBJECT) {
            throw new IOException(where(file, id) + ": expected an object");
        }
        String hostname = null;
        String keyHash = null;
        String policyServer = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String field = parser.currentName();
            JsonToken value = parser.nextToken();
            String text = value == JsonToken.VALUE_STRING ? parser.getText() : null;
            // Skipped whatever the field: the members of {"hostname": {...}} must not be read as the entry's own.
            parser.skipChildren();
            switch (field) {
                case "hostname" -> hostname = text;
                case "key-hash" -> keyHash = text;
                case "policy-server" -> policyServer = text;
                default -> { }
            }
        }
        try {
            return new Node(new NodeId(id), required(hostname, "hostname", file, id), KeyHash.parse(keyHash),
                    new NodeId(required(policyServer, "policy-server", file, id)));
        } catch (IllegalArgumentException e) {
            throw new IOException(where(file, id) + ": " + e.getMessage(), e);
        }
    }

    /**
     * The incremental path: walks the entries by hand, reusing each one whose bytes equal a previous entry's (the
     * one after the last reused first, as Rudder keeps the order, then the few after it, then, after several
     * misses, any by node id), and parses the others one by one.
     *
     * @return the entries, or null when the file must be parsed whole
     */
    private static NodesList reuse(byte[] content, Path file, NodesList previous) {
        int length = content.length;
        int at = skipWhitespace(content, 0);
        if (at >= length || content[at] != '{') {
            return null;
        }
        at = skipWhitespace(content, at + 1);
        Spans<Node> before = previous.spans();
        Entries entries = new Entries(before.size() + 16);
        Spans.Matcher<Node, String> matcher =
                new Spans.Matcher<>(before, (bytes, start, end) -> plainString(bytes, start));
        int parsed = 0;
        int limit = INCREMENTAL_LIMIT + before.size() / 4;
        while (true) {
            if (at >= length || content[at] != '"') {
                return null;
            }
            int match = matcher.find(content, at);
            int end;
            if (match >= 0) {
                end = at + before.length(match);
                entries.add(at, end, before.item(match), content);
            } else {
                if (++parsed > limit) {
                    return null;
                }
                end = parseOne(content, at, file, entries);
                if (end < 0) {
                    return null;
                }
            }
            at = skipWhitespace(content, end);
            if (at >= length) {
                return null;
            }
            if (content[at] == ',') {
                at = skipWhitespace(content, at + 1);
            } else if (content[at] == '}') {
                return skipWhitespace(content, at + 1) == length ? entries.build(content) : null;
            } else {
                return null;
            }
        }
    }

    /**
     * Parses the one entry starting at {@code at} with the JSON parser, as the first member of an object.
     *
     * @return the offset just after it, or -1 when it does not parse (the whole parse then reports why)
     */
    private static int parseOne(byte[] content, int at, Path file, Entries entries) {
        try (JsonParser parser = JSON.createParser(new SequenceInputStream(new ByteArrayInputStream(OPEN_OBJECT),
                new ByteArrayInputStream(content, at, content.length - at)))) {
            if (parser.nextToken() != JsonToken.START_OBJECT || parser.nextToken() != JsonToken.FIELD_NAME
                    || parser.currentTokenLocation().getByteOffset() != OPEN_OBJECT.length) {
                return -1;
            }
            Node node = readEntry(parser, file);
            long end = at + parser.currentLocation().getByteOffset() - OPEN_OBJECT.length;
            return entries.add(at, end, node, content) ? (int) end : -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** @return the JSON string at {@code at} when it has neither escapes nor non-ASCII bytes, else null */
    private static String plainString(byte[] content, int at) {
        for (int i = at + 1; i < content.length; i++) {
            byte b = content[i];
            if (b == '"') {
                return new String(content, at + 1, i - at - 1, StandardCharsets.ISO_8859_1);
            }
            if (b == '\\' || b < 0x20) {
                return null;
            }
        }
        return null;
    }

    /** JSON's insignificant whitespace: space, tab, line feed, carriage return. */
    private static int skipWhitespace(byte[] content, int from) {
        int i = from;
        while (i < content.length && (content[i] == ' ' || content[i] == '\n' || content[i] == '\r' || content[i] == '\t')) {
            i++;
        }
        return i;
    }

    private static String where(Path file, String id) {
        return file + ": node '" + id + "'";
    }

    private static String required(String value, String field, Path file, String id) throws IOException {
        if (value == null || value.isEmpty()) {
            throw new IOException(where(file, id) + ": missing or empty '" + field + "'");
        }
        return value;
    }

    /** Entries in file order with their byte ranges. */
    private static final class Entries {
        private final Spans.Builder<Node> spans;
        private boolean ranged = true;

        Entries(int capacity) {
            spans = new Spans.Builder<>(capacity);
        }

        /**
         * Adds an entry. Its range must start at the id's opening quote and end after the object's closing brace;
         * when the offsets say otherwise, the list is built without ranges and nothing of it will be reused.
         *
         * @return whether the range was as expected
         */
        boolean add(long start, long end, Node node, byte[] content) {
            boolean ok = start >= 0 && end > start && end <= content.length
                    && content[(int) start] == '"' && content[(int) end - 1] == '}';
            ranged &= ok;
            spans.add((int) start, (int) end, node);
            return ok;
        }

        NodesList build(byte[] content) {
            return ranged ? new NodesList(spans.build(content)) : NodesList.unranged(spans.items());
        }
    }
}
