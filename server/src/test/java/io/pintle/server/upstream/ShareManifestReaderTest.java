package io.pintle.server.upstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.dto.Manifest;
import io.pintle.client.DirectorySync;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ShareManifestReaderTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ShareManifestReader reader = new ShareManifestReader(JSON);

    /**
     * Names that interleave in manifest order ("a-b" and "a.c" sort between "a" and "a/..."): each directory handed
     * out whole, once, with the manifest the whole share's manifest gives it; files and unwanted names skipped.
     */
    @Test
    void eachWantedDirectoryIsHandedOutWholeWithItsOwnManifest() throws Exception {
        List<Manifest.Entry> entries = new ArrayList<>();
        for (String top : List.of("a", "a-b", "a-b/rules", "a-b/rules/f", "a.c", "a.c/g", "a/rules", "a/rules/f",
                "a/rules/h", "b", "b/x", "file", "skipped", "skipped/y", "z", "z/rules", "z/rules/f")) {
            boolean file = top.endsWith("/f") || top.endsWith("/g") || top.endsWith("/h") || top.endsWith("/x")
                    || top.endsWith("/y") || top.equals("file");
            entries.add(file
                    ? new Manifest.Entry(top, Manifest.Types.FILE, 3L, "0644", "2026-12-07T00:00:00Z",
                            "0".repeat(64), null)
                    : new Manifest.Entry(top, Manifest.Types.DIRECTORY, null, "0755", "2026-12-07T00:00:00Z", null,
                            null));
        }
        Manifest whole = new Manifest(Manifest.FORMAT, "\"m-1\"", 7, 21, entries);
        Map<String, Manifest> handed = new LinkedHashMap<>();
        ShareManifestReader.Header header = reader.read(json(whole), name -> !name.equals("skipped"),
                (name, own) -> assertThat(handed.put(name, own)).as(name + " handed out twice").isNull());

        assertThat(header).isEqualTo(new ShareManifestReader.Header("\"m-1\"", null, null));
        assertThat(header.isChangeList()).isFalse();
        assertThat(handed).containsOnlyKeys("a", "a-b", "a.c", "b", "z");
        assertThat(handed).containsExactlyInAnyOrderEntriesOf(
                DirectorySync.subtreeManifests(whole, Set.of("a", "a-b", "a.c", "b", "z")));
        assertThat(handed.get("a").entries()).extracting(Manifest.Entry::path)
                .containsExactly("rules", "rules/f", "rules/h");
    }

    @Test
    void aChangeListsSinceAndRemovedAreReadWhereverTheyStand() throws Exception {
        String json = "{\"removed\":[\"gone-1\",\"gone-2\"],\"format\":1,\"etag\":\"\\\"m-2\\\"\",\"since\":"
                + "\"\\\"m-1\\\"\",\"files\":1,\"bytes\":1,\"future\":{\"x\":[1,2]},\"entries\":[{\"path\":\"n\","
                + "\"type\":\"directory\",\"mode\":\"0755\"},{\"path\":\"n/f\",\"type\":\"file\",\"size\":1,"
                + "\"mode\":\"0644\",\"sha256\":\"" + "1".repeat(64) + "\",\"extra\":true}]}";
        List<String> names = new ArrayList<>();
        ShareManifestReader.Header header = reader.read(stream(json), name -> true, (name, own) -> names.add(name));
        assertThat(header).isEqualTo(new ShareManifestReader.Header("\"m-2\"", "\"m-1\"", List.of("gone-1",
                "gone-2")));
        assertThat(header.isChangeList()).isTrue();
        assertThat(names).containsExactly("n");
    }

    @Test
    void aManifestOutOfOrderOrMalformedIsRefusedWithAReason() {
        String outOfOrder = "{\"etag\":\"e\",\"entries\":[{\"path\":\"a\",\"type\":\"directory\"},{\"path\":\"a/f\","
                + "\"type\":\"file\"},{\"path\":\"b\",\"type\":\"directory\"},{\"path\":\"a/g\",\"type\":\"file\"}]}";
        assertThatThrownBy(() -> reader.read(stream(outOfOrder), name -> true, (name, own) -> {}))
                .isInstanceOf(ShareManifestReader.InvalidManifestException.class)
                .hasMessage("the manifest is not in manifest order: a/g after the rest of a");
        assertThatThrownBy(() -> reader.read(stream("{\"entries\":[]}"), name -> true, (name, own) -> {}))
                .hasMessage("the manifest has no etag");
        assertThatThrownBy(() -> reader.read(stream("[]"), name -> true, (name, own) -> {}))
                .hasMessage("the manifest is not valid: an object expected, START_ARRAY found");
        assertThatThrownBy(() -> reader.read(stream("{\"etag\":\"e\",\"since\":\"d\",\"entries\":[]}"),
                name -> true, (name, own) -> {}))
                .hasMessage("a change list has both since and removed, a whole manifest neither");
        assertThatThrownBy(() -> reader.read(stream("{\"etag\":\"e\",\"entries\":[{\"path\":\"a\"}]}"),
                name -> true, (name, own) -> {})).isInstanceOf(IOException.class);
        // Cut short, as a response cut by the root would leave it.
        assertThatThrownBy(() -> reader.read(stream("{\"etag\":\"e\",\"entries\":[{\"path\":\"a\",\"type\":"
                + "\"directory\"},"), name -> true, (name, own) -> {})).isInstanceOf(IOException.class);
    }

    private static ByteArrayInputStream json(Manifest manifest) throws IOException {
        return new ByteArrayInputStream(JSON.writeValueAsBytes(manifest));
    }

    private static ByteArrayInputStream stream(String json) {
        return new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8));
    }
}
