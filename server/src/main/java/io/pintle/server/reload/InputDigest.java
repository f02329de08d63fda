package io.pintle.server.reload;

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
}
