package io.pintle.client;

import io.pintle.api.dto.Manifest;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * Writes one file of the new tree from a stream, hashing as it goes, and fails the attempt unless exactly the
 * manifest's bytes arrived: the manifest's size (never reading more than one byte past it, so an endless answer
 * costs nothing) and its SHA-256. A read error also fails the attempt (it is the network, or the server's tree
 * changing); a write error is local and propagates as it is.
 */
final class VerifiedWrite {
    private static final int BUFFER = 64 * 1024;

    private VerifiedWrite() {}

    /**
     * @param source the content; read up to one byte past the expected size, not closed
     * @param destination a new file (created; must not exist)
     * @param path the entry's path, for messages
     * @param entry the manifest entry the content must match
     * @param origin where the content comes from, for messages
     * @return the bytes written
     * @throws AttemptFailure when the content is not the manifest's or cannot be read
     * @throws IOException when the file cannot be written
     */
    static long write(InputStream source, Path destination, TreePath path, Manifest.Entry entry, String origin)
            throws AttemptFailure, IOException {
        long expected = entry.size();
        MessageDigest digest = SyncPlanner.newDigest();
        byte[] buffer = new byte[BUFFER];
        long total = 0;
        try (OutputStream out = Files.newOutputStream(destination, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE)) {
            while (true) {
                int want = (int) Math.min(buffer.length, expected - total + 1);
                int n;
                try {
                    n = source.read(buffer, 0, want);
                } catch (IOException e) {
                    throw new AttemptFailure("reading '" + path + "' from " + origin + " failed: " + e, e);
                }
                if (n < 0) {
                    break;
                }
                total += n;
                if (total > expected) {
                    throw new AttemptFailure("'" + path + "' from " + origin + " is longer than the manifest's "
                            + expected + " bytes (the server's tree changed?)", null);
                }
                digest.update(buffer, 0, n);
                out.write(buffer, 0, n);
            }
        }
        if (total != expected) {
            throw new AttemptFailure("'" + path + "' from " + origin + " has " + total + " bytes, the manifest "
                    + expected + " (the server's tree changed, or the transfer was cut)", null);
        }
        String sha256 = HexFormat.of().formatHex(digest.digest());
        if (!sha256.equals(entry.sha256())) {
            throw new AttemptFailure("'" + path + "' from " + origin + " has SHA-256 " + sha256 + ", the manifest "
                    + entry.sha256() + " (the server's tree changed?)", null);
        }
        return total;
    }
}
