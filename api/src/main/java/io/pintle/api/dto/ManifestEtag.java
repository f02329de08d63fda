package io.pintle.api.dto;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A manifest's strong ETag, computed as its entries go by: a SHA-256 of every field of every entry in manifest
 * order, so that any change to the tree (a file's content, mode or time, an entry added, removed or renamed) gives
 * a new one. The server derives a manifest's ETag this way; a client that holds the entries below one directory of
 * a larger manifest (a relay, from its share's manifest) derives that directory's own ETag from them, relative to
 * it, and gets what the server's manifest of that directory would say. Not thread-safe; one per computation.
 */
public final class ManifestEtag {
    private final MessageDigest sha256;
    private final StringBuilder line = new StringBuilder(256);

    public ManifestEtag() {
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /**
     * @param entry the next entry, in manifest order
     * @return this
     */
    public ManifestEtag add(Manifest.Entry entry) {
        line.setLength(0);
        line.append(entry.path()).append('\0').append(entry.type()).append('\0').append(entry.size())
                .append('\0').append(entry.mode()).append('\0').append(entry.mtime()).append('\0')
                .append(entry.sha256()).append('\0').append(entry.target()).append('\n');
        sha256.update(line.toString().getBytes(StandardCharsets.UTF_8));
        return this;
    }

    /** @return the ETag, quoted; the digest is finished, so call it once */
    public String value() {
        return "\"m-" + HexFormat.of().formatHex(sha256.digest(), 0, 16) + "\"";
    }
}
