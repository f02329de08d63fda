package io.pintle.server.uploads;

import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.security.Signature;
import java.security.SignatureException;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.bouncycastle.cms.CMSException;
import org.bouncycastle.cms.CMSProcessableByteArray;
import org.bouncycastle.cms.CMSSignedData;
import org.bouncycastle.cms.SignerInformation;
import org.bouncycastle.cms.SignerInformationVerifier;
import org.bouncycastle.cms.jcajce.JcaSimpleSignerInfoVerifierBuilder;
import org.bouncycastle.operator.OperatorCreationException;

/**
 * Checks that an uploaded run report or inventory was signed by its node, with a key pinned for it, as relayd
 * ({@code input.rs}: S/MIME with {@code TEXT|NOINTERN|NOVERIFY}) and Rudder's webapp ({@code CheckInventoryDigest}:
 * {@code rudder-signature-v1}, SHA512withRSA) do. Plain functions of their inputs: which keys count is the
 * caller's decision ({@link io.pintle.server.nodes.NodeRegistry#certifiedKeys}).
 *
 * <p>Formats, from Rudder's agent: a report is {@code openssl smime -sign -text -nocerts} of the run log, then
 * gzip; an inventory is signed before compression by {@code rudder-sign}, {@code openssl dgst -sha512 -sign}
 * written in hex into a {@code <inventory>.ocs.sign} properties file.
 */
public final class UploadSignatures {
    /**
     * A sign file is eight short lines (the digest of a 4096-bit key is 1024 hex digits): anything past this is
     * not one.
     */
    static final int MAX_SIGN_FILE_BYTES = 64 * 1024;
    /** The only sign file header Rudder's webapp accepts. */
    static final String SIGNATURE_HEADER = "rudder-signature-v1";
    /** The only sign file algorithm Rudder's webapp accepts. */
    static final String SIGNATURE_ALGORITHM = "sha512";

    private UploadSignatures() {}

    /** The outcome of a check: verified, or refused with a stable reason and words an operator can act on. */
    public sealed interface Verdict {
        /** @return whether the signature was verified */
        default boolean ok() {
            return this instanceof Verified;
        }

        /**
         * The upload was signed by one of the keys.
         *
         * @param key the sha256 pin of the key that made the signature
         */
        record Verified(KeyHash key) implements Verdict {
            public Verified {
                Objects.requireNonNull(key);
            }
        }

        /**
         * The upload is refused.
         *
         * @param reason why, as a stable code
         * @param detail why, in words an operator can act on (never a library's message)
         */
        record Refused(Reason reason, String detail) implements Verdict {
            public Refused {
                Objects.requireNonNull(reason);
                Objects.requireNonNull(detail);
            }
        }
    }

    /** Why an upload is refused. */
    public enum Reason {
        /** A report without a valid signature by a pinned key of its node, or not S/MIME at all. */
        REPORT_SIGNATURE("report-signature"),
        /** A report larger, uncompressed, than the bound. */
        REPORT_TOO_LARGE("report-too-large"),
        /** An inventory whose sign file is missing, malformed, or not a signature of it by a pinned key. */
        INVENTORY_SIGNATURE("inventory-signature");

        private final String code;

        Reason(String code) {
            this.code = code;
        }

        /** @return the stable code, for metrics and responses */
        public String code() {
            return code;
        }
    }

    /**
     * Checks a run report as relayd does: its S/MIME signature covers the signed part and was made by one of the
     * keys (certificate chains and validity are not checked: Rudder's agent certificates are self-signed).
     *
     * @param name the report's file name: {@code .gz} is gunzipped, {@code .zip} read from its first entry, anything
     *     else read as is
     * @param uploaded the report as uploaded; read (to the bound), not closed
     * @param maxUncompressedBytes the largest report accepted, uncompressed (the report is held in memory)
     * @param keys the node's pinned keys (RSA or EC)
     * @return the verdict
     * @throws IOException when {@code uploaded} cannot be read (a corrupt compression is a refusal, not this)
     * @throws IllegalArgumentException when the bound is negative
     */
    public static Verdict verifyReport(String name, InputStream uploaded, long maxUncompressedBytes,
            List<PublicKey> keys) throws IOException {
        if (maxUncompressedBytes < 0) {
            throw new IllegalArgumentException("the report size bound must not be negative: " + maxUncompressedBytes);
        }
        NodeId node = UploadNames.reportNode(name);
        String whose = node == null ? "the node" : "node " + node;
        Source source = new Source(uploaded);
        byte[] report;
        try (InputStream content = decompress(name, source)) {
            if (content == null) {
                return refusedReport("the report is not a zip archive with an entry");
            }
            int bound = (int) Math.min(maxUncompressedBytes, Integer.MAX_VALUE - 16L);
            report = content.readNBytes(bound + 1);
            if (report.length > bound) {
                return new Verdict.Refused(Reason.REPORT_TOO_LARGE,
                        "the report is larger than " + maxUncompressedBytes + " bytes uncompressed");
            }
        } catch (IOException e) {
            source.rethrowIfItFailed();
            return refusedReport("the report is not valid " + compression(name) + " (corrupt or truncated upload)");
        }

        MultipartSigned message;
        try {
            message = MultipartSigned.parse(report, report.length);
        } catch (MultipartSigned.Malformed e) {
            return refusedReport("the report is not S/MIME signed (rudder-agent's report.sh signs every run log): "
                    + e.getMessage());
        }
        CMSSignedData signed;
        List<SignerInformation> signers;
        try {
            signed = new CMSSignedData(new CMSProcessableByteArray(message.signed()), message.signature());
            signers = List.copyOf(signed.getSignerInfos().getSigners());
        } catch (CMSException | RuntimeException e) {
            // BouncyCastle reports malformed DER with a range of unchecked exceptions, besides CMSException.
            return refusedReport("the report's signature part is not a PKCS#7 signature");
        }
        if (signers.isEmpty()) {
            return refusedReport("the report's signature has no signer");
        }
        if (keys.isEmpty()) {
            return refusedReport(whose + " has no pinned key to check the report's signature with");
        }
        for (PublicKey key : keys) {
            SignerInformationVerifier verifier;
            try {
                verifier = new JcaSimpleSignerInfoVerifierBuilder().build(key);
            } catch (OperatorCreationException e) {
                continue;
            }
            for (SignerInformation signer : signers) {
                try {
                    if (signer.verify(verifier)) {
                        return new Verdict.Verified(KeyHash.sha256(key));
                    }
                } catch (CMSException | RuntimeException e) {
                    // Another key type, a digest mismatch, an algorithm this JVM lacks: not this key's signature.
                }
            }
        }
        return refusedReport("the signature was not made by " + whose + "'s pinned key"
                + (keys.size() > 1 ? "s" : "") + ", or the report was changed after it was signed");
    }

    private static Verdict.Refused refusedReport(String detail) {
        return new Verdict.Refused(Reason.REPORT_SIGNATURE, detail);
    }

    /**
     * Checks an inventory as Rudder's webapp does: its sign file is {@code rudder-signature-v1} with algorithm
     * {@code sha512}, and its digest is a SHA512withRSA signature of the uncompressed inventory by one of the keys.
     * The inventory is streamed, never held whole.
     *
     * @param inventoryAsUploaded the inventory as uploaded; read to its end, not closed
     * @param inventoryName its file name: {@code .gz} is gunzipped, anything else read as is
     * @param signFile its {@code .ocs.sign} file; read (to {@link #MAX_SIGN_FILE_BYTES}), not closed
     * @param keys the node's pinned keys (only RSA keys can have made such a signature)
     * @return the verdict
     * @throws IOException when a stream cannot be read (a corrupt compression is a refusal, not this)
     */
    public static Verdict verifyInventory(InputStream inventoryAsUploaded, String inventoryName, InputStream signFile,
            List<PublicKey> keys) throws IOException {
        NodeId node = UploadNames.inventoryNode(inventoryName);
        String whose = node == null ? "the node" : "node " + node;
        byte[] signFileBytes = signFile.readNBytes(MAX_SIGN_FILE_BYTES + 1);
        if (signFileBytes.length > MAX_SIGN_FILE_BYTES) {
            return refusedInventory("the sign file is larger than " + MAX_SIGN_FILE_BYTES
                    + " bytes: it is not a rudder-sign file");
        }
        SignFile sign;
        try {
            sign = SignFile.parse(new String(signFileBytes, StandardCharsets.ISO_8859_1));
        } catch (IllegalArgumentException e) {
            return refusedInventory(e.getMessage());
        }

        List<PublicKey> rsaKeys = keys.stream().filter(key -> key instanceof RSAPublicKey).toList();
        if (rsaKeys.isEmpty()) {
            return refusedInventory(whose + " has no pinned RSA key to check the inventory's signature with");
        }
        List<Signature> verifiers = new ArrayList<>(rsaKeys.size());
        for (PublicKey key : rsaKeys) {
            try {
                Signature verifier = Signature.getInstance("SHA512withRSA");
                verifier.initVerify(key);
                verifiers.add(verifier);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA512withRSA is not available in this JVM", e);
            } catch (InvalidKeyException e) {
                verifiers.add(null);
            }
        }
        MessageDigest sha512 = sha512();

        Source source = new Source(inventoryAsUploaded);
        try (InputStream content = decompress(inventoryName, source)) {
            if (content == null) {
                return refusedInventory("the inventory is not a zip archive with an entry");
            }
            byte[] buffer = new byte[64 * 1024];
            int read;
            while ((read = content.read(buffer)) > 0) {
                sha512.update(buffer, 0, read);
                for (Signature verifier : verifiers) {
                    if (verifier != null) {
                        verifier.update(buffer, 0, read);
                    }
                }
            }
        } catch (SignatureException e) {
            throw new IllegalStateException("a signature initialised for verification refused an update", e);
        } catch (IOException e) {
            source.rethrowIfItFailed();
            return refusedInventory("the inventory is not valid " + compression(inventoryName)
                    + " (corrupt or truncated upload)");
        }

        for (int i = 0; i < verifiers.size(); i++) {
            Signature verifier = verifiers.get(i);
            try {
                if (verifier != null && verifier.verify(sign.digest())) {
                    return new Verdict.Verified(KeyHash.sha256(rsaKeys.get(i)));
                }
            } catch (SignatureException e) {
                // A signature of another length (another key size): not this key's.
            }
        }
        // The hash_value line is not part of the check (Rudder's webapp ignores it), but it tells which of the two
        // failed: the inventory or the key.
        boolean sameContent = sign.hashValue() != null
                && MessageDigest.isEqual(sign.hashValue(), sha512.digest());
        return refusedInventory(sameContent
                ? "the inventory's signature was not made by " + whose + "'s pinned key"
                        + (rsaKeys.size() > 1 ? "s" : "") + " (the inventory is the one that was signed)"
                : "the inventory's signature was not made by " + whose + "'s pinned key"
                        + (rsaKeys.size() > 1 ? "s" : "") + ", or the inventory was changed after it was signed");
    }

    private static Verdict.Refused refusedInventory(String detail) {
        return new Verdict.Refused(Reason.INVENTORY_SIGNATURE, detail);
    }

    /**
     * A {@code rudder-sign} file's lines that matter.
     *
     * @param digest the signature
     * @param hashValue the sha512 of the inventory, or null when absent or malformed
     */
    private record SignFile(byte[] digest, byte[] hashValue) {
        /** @throws IllegalArgumentException with an operator's message when it is not an accepted sign file */
        static SignFile parse(String text) {
            String header = null;
            String algorithm = null;
            String digest = null;
            String hashValue = null;
            for (String line : text.split("\r?\n", -1)) {
                int equals = line.indexOf('=');
                if (equals < 0) {
                    continue;
                }
                String key = line.substring(0, equals).strip();
                String value = line.substring(equals + 1).strip();
                switch (key) {
                    case "header" -> header = value;
                    case "algorithm" -> algorithm = value;
                    case "digest" -> digest = value;
                    case "hash_value" -> hashValue = value;
                    default -> { }
                }
            }
            if (header == null) {
                throw new IllegalArgumentException("the sign file has no header line: it is not a rudder-sign file");
            }
            if (!header.equals(SIGNATURE_HEADER)) {
                throw new IllegalArgumentException("the sign file's header is " + MultipartSigned.printable(header)
                        + "; only " + SIGNATURE_HEADER + " is accepted (as by Rudder's webapp)");
            }
            if (algorithm == null || !algorithm.equals(SIGNATURE_ALGORITHM)) {
                throw new IllegalArgumentException("the sign file's algorithm is "
                        + (algorithm == null ? "missing" : MultipartSigned.printable(algorithm)) + "; only "
                        + SIGNATURE_ALGORITHM + " is accepted (as by Rudder's webapp)");
            }
            if (digest == null || digest.isEmpty()) {
                throw new IllegalArgumentException("the sign file has no digest");
            }
            byte[] signature = hex(digest);
            if (signature == null) {
                throw new IllegalArgumentException("the sign file's digest is not hexadecimal");
            }
            return new SignFile(signature, hashValue == null ? null : hex(hashValue));
        }

        private static byte[] hex(String text) {
            try {
                return HexFormat.of().parseHex(text.toLowerCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
    }

    /**
     * @return the uploaded content, uncompressed by the name's extension; null for a zip archive without entries
     */
    private static InputStream decompress(String name, InputStream uploaded) throws IOException {
        String lower = name == null ? "" : name.toLowerCase(Locale.ROOT);
        if (lower.endsWith(".gz")) {
            return new GZIPInputStream(new Unclosed(uploaded), 64 * 1024);
        }
        if (lower.endsWith(".zip")) {
            ZipInputStream zip = new ZipInputStream(new Unclosed(uploaded));
            ZipEntry first = zip.getNextEntry();
            return first == null ? null : zip;
        }
        return new Unclosed(uploaded);
    }

    private static String compression(String name) {
        String lower = name == null ? "" : name.toLowerCase(Locale.ROOT);
        return lower.endsWith(".gz") ? "gzip" : lower.endsWith(".zip") ? "zip" : "text";
    }

    private static MessageDigest sha512() {
        try {
            return MessageDigest.getInstance("SHA-512");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-512 is not available in this JVM", e);
        }
    }

    /** The caller's stream, read but left open: the caller owns it. */
    private static final class Unclosed extends FilterInputStream {
        Unclosed(InputStream in) {
            super(in);
        }

        @Override
        public void close() {}
    }

    /**
     * The uploaded stream, remembering whether reading it failed: an {@link IOException} from the decompressor is
     * then either the upload's bytes (a refusal) or the stream itself (the caller's I/O error).
     */
    private static final class Source extends FilterInputStream {
        private IOException failure;

        Source(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            try {
                return super.read();
            } catch (IOException e) {
                failure = e;
                throw e;
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                return super.read(b, off, len);
            } catch (IOException e) {
                failure = e;
                throw e;
            }
        }

        @Override
        public long skip(long n) throws IOException {
            try {
                return super.skip(n);
            } catch (IOException e) {
                failure = e;
                throw e;
            }
        }

        void rethrowIfItFailed() throws IOException {
            if (failure != null) {
                throw failure;
            }
        }
    }
}
