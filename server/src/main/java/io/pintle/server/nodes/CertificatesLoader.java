package io.pintle.server.nodes;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Reads node certificate bundles ({@code nodescerts.pem}, {@code allnodescerts.pem}): concatenated PEM
 * certificates whose subject UID names the node. A file that is not valid PEM is an error; a certificate without
 * a usable UID is skipped with a warning, so one malformed node certificate does not lock out every node
 * (Rudder #24112).
 *
 * <p>Blocks already parsed by a previous load (same PEM text) are not parsed again: a root's
 * {@code allnodescerts.pem} holds every node, and a reload after one node is accepted must stay fast.
 */
public final class CertificatesLoader {
    private static final byte[] BEGIN = ascii("-----BEGIN ");
    private static final byte[] DASHES = ascii("-----");
    private static final byte[] CERTIFICATE_FOOTER = ascii("-----END CERTIFICATE-----");

    private CertificatesLoader() {}

    /**
     * @param file a PEM bundle
     * @param warnings receives one message per skipped certificate
     * @return the bindings it establishes
     * @throws IOException naming the file when it cannot be read or parsed
     */
    public static List<CertificateBinding> load(Path file, Consumer<String> warnings) throws IOException {
        try {
            return parse(Files.readAllBytes(file), file, warnings, Map.of()).bindings();
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        }
    }

    /**
     * @param content the bundle's bytes
     * @param file its name, for messages
     * @param warnings receives one message per skipped certificate
     * @param known blocks parsed before, by {@link CertificateIndex#blocks()} key; reused instead of parsed
     * @return the bindings and the parsed blocks
     * @throws IOException naming the file when it is not a PEM certificate bundle
     */
    public static CertificateIndex parse(byte[] content, Path file, Consumer<String> warnings,
            Map<String, CertificateBinding> known) throws IOException {
        // Scanned as bytes: a root's bundle is tens of MB, and a second copy as a String would only feed the GC.
        List<CertificateBinding> bindings = new ArrayList<>();
        Map<String, CertificateBinding> blocks = new HashMap<>();
        MessageDigest digest = sha256();
        CertificateFactory factory = null;
        int index = 0;
        int at = indexOf(content, BEGIN, 0);
        if (at < 0 && !new String(content, StandardCharsets.ISO_8859_1).isBlank()) {
            throw new IOException(file + ": not valid PEM: no certificate found");
        }
        while (at >= 0) {
            index++;
            int labelStart = at + BEGIN.length;
            int labelEnd = indexOf(content, DASHES, labelStart);
            if (labelEnd < 0) {
                throw new IOException(file + ": not valid PEM: truncated header of block " + index);
            }
            String label = new String(content, labelStart, labelEnd - labelStart, StandardCharsets.ISO_8859_1);
            if (!label.equals("CERTIFICATE")) {
                throw new IOException(file + ": expected only certificates, found '" + label + "' (block " + index + ")");
            }
            int end = indexOf(content, CERTIFICATE_FOOTER, labelEnd);
            if (end < 0) {
                throw new IOException(file + ": not valid PEM: block " + index + " has no '-----END CERTIFICATE-----'");
            }
            int bodyStart = labelEnd + DASHES.length;
            digest.update(content, bodyStart, end - bodyStart);
            String key = HexFormat.of().formatHex(digest.digest());
            CertificateBinding binding = known.get(key);
            if (binding == null) {
                if (factory == null) {
                    factory = certificateFactory();
                }
                String body = new String(content, bodyStart, end - bodyStart, StandardCharsets.ISO_8859_1);
                X509Certificate certificate = decode(factory, body, file, index);
                Optional<CertificateBinding> parsed = bind(certificate, file, index, warnings);
                if (parsed.isPresent()) {
                    binding = parsed.get();
                }
            }
            if (binding != null) {
                bindings.add(binding);
                blocks.put(key, binding);
            }
            at = indexOf(content, BEGIN, end + CERTIFICATE_FOOTER.length);
        }
        return new CertificateIndex(bindings, blocks);
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /** First index of {@code needle} in {@code haystack} at or after {@code from}, or -1. */
    static int indexOf(byte[] haystack, byte[] needle, int from) {
        byte first = needle[0];
        int last = haystack.length - needle.length;
        for (int i = Math.max(0, from); i <= last; i++) {
            if (haystack[i] != first) {
                continue;
            }
            int j = 1;
            while (j < needle.length && haystack[i + j] == needle[j]) {
                j++;
            }
            if (j == needle.length) {
                return i;
            }
        }
        return -1;
    }

    private static X509Certificate decode(CertificateFactory factory, String body, Path file, int index)
            throws IOException {
        try {
            byte[] der = Base64.getMimeDecoder().decode(body.strip());
            return (X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der));
        } catch (IllegalArgumentException | CertificateException | ClassCastException e) {
            throw new IOException(file + ": not valid PEM: certificate " + index + " is invalid: " + e.getMessage(), e);
        }
    }

    private static Optional<CertificateBinding> bind(X509Certificate certificate, Path file, int index,
            Consumer<String> warnings) {
        Optional<String> uid = CertificateSubjects.uid(certificate);
        if (uid.isEmpty()) {
            warnings.accept(file + ": certificate " + index + " ('"
                    + certificate.getSubjectX500Principal().getName() + "') has no UID; skipped");
            return Optional.empty();
        }
        try {
            return Optional.of(new CertificateBinding(new NodeId(uid.get()), KeyHash.sha256(certificate.getPublicKey())));
        } catch (IllegalArgumentException e) {
            warnings.accept(file + ": certificate " + index + ": " + e.getMessage() + "; skipped");
            return Optional.empty();
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }

    private static CertificateFactory certificateFactory() {
        try {
            return CertificateFactory.getInstance("X.509");
        } catch (CertificateException e) {
            throw new IllegalStateException("X.509 is not available in this JVM", e);
        }
    }
}
