package io.pintle.server.reload;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * One input file as a snapshot read it, so that the next reload can tell "unchanged" from "changed" by comparing
 * bytes, and status can show exactly which version of each file is live by its SHA-256.
 *
 * <p>The bytes are kept (the nodes list and certificate bundles keep them anyway, to reuse their unchanged
 * entries), except for a private key: of that only the digest is kept. The digest of kept bytes is computed when
 * first asked for, off the reload's path: hashing a root's 40 MB certificate bundle would cost a reload 25 ms.
 */
public final class InputFile {
    private final byte[] content;
    private final long size;
    private volatile String sha256;

    private InputFile(byte[] content, long size, String sha256) {
        this.content = content;
        this.size = size;
        this.sha256 = sha256;
    }

    /**
     * @param content an input file's bytes; kept, not copied, and never modified
     * @return the input
     */
    public static InputFile of(byte[] content) {
        return new InputFile(content, content.length, null);
    }

    /**
     * @param content a secret input file's bytes (a private key); not kept
     * @return the input, with its digest only
     */
    public static InputFile secret(byte[] content) {
        return new InputFile(null, content.length, digest(content));
    }

    /** @return the SHA-256 of the file's bytes, hex */
    public String sha256() {
        String digest = sha256;
        if (digest == null) {
            // Racing callers compute the same value; either may publish it.
            digest = digest(content);
            sha256 = digest;
        }
        return digest;
    }

    /** @return the file's size in bytes */
    public long size() {
        return size;
    }

    /**
     * @param other another read of the same file, or null
     * @return whether both hold the same bytes
     */
    public boolean sameContent(InputFile other) {
        if (other == null || other.size != size) {
            return false;
        }
        if (content != null && other.content != null) {
            return Arrays.equals(content, other.content);
        }
        return sha256().equals(other.sha256());
    }

    private static String digest(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }

    @Override
    public String toString() {
        return "InputFile[size=" + size + "]";
    }
}
