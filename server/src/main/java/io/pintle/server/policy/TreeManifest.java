package io.pintle.server.policy;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.pintle.api.dto.Manifest;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes the JSON {@link Manifest} of one {@link TreeVersion} as its tree is walked again, with bounded memory
 * whatever the tree's size: the same bytes as serializing the whole {@code Manifest} record with Jackson, but no
 * entry is held once written. The entries must still be the version's (see {@link TreeScanner#replay}): if the
 * tree changed since it was scanned, the write fails before the closing {@code ]}}, so a reader sees a truncated
 * document, never a manifest that does not match its ETag.
 */
public final class TreeManifest {
    /** Turns the generator's 8 KB flushes into 64 KiB writes to the response. */
    private static final int BUFFER_BYTES = 64 * 1024;

    private final ObjectMapper json = new ObjectMapper();
    // Flushing after every entry would send a frame per entry.
    private final ObjectWriter entries = json.writerFor(Manifest.Entry.class)
            .without(SerializationFeature.FLUSH_AFTER_WRITE_VALUE);

    /**
     * @param scanner walks the tree again
     * @param tree the version to describe
     * @param output where the JSON goes; flushed, not closed
     * @throws FileVersion.FileChangedException if the tree is no longer that version
     * @throws IOException if the tree cannot be read or the output fails
     */
    public void write(TreeScanner scanner, TreeVersion tree, OutputStream output) throws IOException {
        BufferedOutputStream buffered = new BufferedOutputStream(output, BUFFER_BYTES);
        // Not closed on failure: closing writes the missing brackets and would make a broken document look whole.
        JsonGenerator generator = json.getFactory().createGenerator(buffered);
        generator.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        // The fields in the order of the Manifest record, which is how Jackson writes it.
        generator.writeStartObject();
        generator.writeNumberField("format", Manifest.FORMAT);
        generator.writeStringField("etag", tree.etag());
        generator.writeNumberField("files", tree.files());
        generator.writeNumberField("bytes", tree.bytes());
        generator.writeArrayFieldStart("entries");
        scanner.replay(tree, (entry, stat) -> entries.writeValue(generator, entry));
        generator.writeEndArray();
        generator.writeEndObject();
        generator.close();
        buffered.flush();
    }
}
