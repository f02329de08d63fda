package io.pintle.server.reload;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The content digest of one input file, so that a reload can tell "nothing changed" from "something changed",
 * and status can show exactly which version of each file is live.
 *
 * @param sha256 hex digest
 * @param size size in bytes
 */
public record InputDigest(String sha256, long size) {
    /**
     * @param content an input file's bytes
     * @return their digest
     */
    public static InputDigest of(byte[] content) {
        try {
            return new InputDigest(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content)),
                    content.length);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }

    /**
     * @param file an input file
     * @return its digest
     * @throws IOException naming the file when it cannot be read
     */
    public static InputDigest of(Path file) throws IOException {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            long size = 0;
            try (InputStream in = Files.newInputStream(file)) {
                byte[] buffer = new byte[64 * 1024];
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    digest.update(buffer, 0, read);
                    size += read;
                }
            }
            return new InputDigest(HexFormat.of().formatHex(digest.digest()), size);
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }
}
