package io.pintle.server.nodes;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Reads node certificate bundles ({@code nodescerts.pem}, {@code allnodescerts.pem}): concatenated PEM
 * certificates whose subject UID names the node. A file that is not valid PEM is an error; a certificate without
 * a usable UID is skipped with a warning, so one malformed node certificate does not lock out every node
 * (Rudder #24112).
 *
 * <p>Blocks already parsed by a previous load (same bytes) are not parsed again: a root's
 * {@code allnodescerts.pem} holds every node, and a reload after one node is accepted must stay fast.
 */
public final class CertificatesLoader {
    private static final byte[] BEGIN = ascii("-----BEGIN ");
    private static final byte[] DASHES = ascii("-----");
    private static final byte[] CERTIFICATE_FOOTER = ascii("-----END CERTIFICATE-----");
    /** Bytes before the footer that {@link #blockKey} hashes. */
    private static final int KEY_BYTES = 48;

    private CertificatesLoader() {}

    /**
     * @param file a PEM bundle
     * @param warnings receives one message per skipped certificate
     * @return the bindings it establishes
     * @throws IOException naming the file when it cannot be read or parsed
     */
    public static List<CertificateBinding> load(Path file, Consumer<String> warnings) throws IOException {
        try {
            return parse(Files.readAllBytes(file), file, warnings, CertificateIndex.EMPTY).bindings();
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file", e);
        }
    }

    /**
     * @param content the bundle's bytes; the index keeps them
     * @param file its name, for messages
     * @param warnings receives one message per skipped certificate
     * @param previous the index of this bundle's previous load, whose blocks are reused where the bytes are the
     *     same ({@link CertificateIndex#EMPTY} for none)
     * @return the bindings and where each block lies
     * @throws IOException naming the file when it is not a PEM certificate bundle
     */
    public static CertificateIndex parse(byte[] content, Path file, Consumer<String> warnings,
            CertificateIndex previous) throws IOException {
        // Scanned as bytes: a root's bundle is tens of MB, and a second copy as a String would only feed the GC.
        // Rudder rewrites the whole bundle when one node changes, keeping the others in the same order: each block
        // is first compared with the previous load's block that followed the last one reused, then with the few
        // after it, then, after several misses, looked up among all of them. Either way a block is reused only
        // when its bytes are equal.
        Spans.Builder<CertificateBinding> blocks = new Spans.Builder<>(previous.blockCount() + 16);
        Spans.Matcher<CertificateBinding, Long> matcher =
                new Spans.Matcher<>(previous.blocks(), CertificatesLoader::blockKey);
        CertificateFactory factory = null;
        int at = indexOf(content, BEGIN, 0);
        if (at < 0 && !new String(content, StandardCharsets.ISO_8859_1).isBlank()) {
            throw new IOException(file + ": not valid PEM: no certificate found");
        }
        while (at >= 0) {
            int index = blocks.items().size() + 1;
            // A block found among the previous ones is not scanned: its end is the previous one's.
            int match = matcher.find(content, at);
            int end = match >= 0 ? at + previous.blocks().length(match) : blockEnd(content, at, file, index);
            CertificateBinding binding = match >= 0 ? previous.blocks().item(match) : null;
            if (binding == null) {
                // New, or skipped last time: parsed (again), so that a skipped certificate is reported each time.
                if (factory == null) {
                    factory = certificateFactory();
                }
                binding = parseBlock(factory, content, at, end, file, index, warnings).orElse(null);
            }
            blocks.add(at, end, binding);
            at = indexOf(content, BEGIN, end);
        }
        return new CertificateIndex(blocks.build(content));
    }

    /**
     * A cheap key for a block, to find a moved block among the previous ones: its length and a hash of its last
     * bytes (the end of the signature, which differs between certificates). Equal keys are then confirmed by
     * comparing the bytes.
     *
     * @param end just after the block's footer, or -1 to scan for it
     * @return the key, or null when the block has no footer
     */
    private static Long blockKey(byte[] content, int start, int end) {
        if (end < 0) {
            int labelEnd = indexOf(content, DASHES, start + BEGIN.length);
            end = labelEnd < 0 ? -1 : footerEnd(content, labelEnd);
            if (end < 0) {
                return null;
            }
        }
        int hash = 1;
        for (int i = Math.max(start, end - CERTIFICATE_FOOTER.length - KEY_BYTES); i < end; i++) {
            hash = 31 * hash + content[i];
        }
        return ((long) (end - start) << 32) | (hash & 0xffffffffL);
    }

    /** @return the offset just after the footer of the block whose header starts at {@code at} */
    private static int blockEnd(byte[] content, int at, Path file, int index) throws IOException {
        int labelStart = at + BEGIN.length;
        int labelEnd = indexOf(content, DASHES, labelStart);
        if (labelEnd < 0) {
            throw new IOException(file + ": not valid PEM: truncated header of block " + index);
        }
        String label = new String(content, labelStart, labelEnd - labelStart, StandardCharsets.ISO_8859_1);
        if (!label.equals("CERTIFICATE")) {
            throw new IOException(file + ": expected only certificates, found '" + label + "' (block " + index + ")");
        }
        int end = footerEnd(content, labelEnd);
        if (end < 0) {
            throw new IOException(file + ": not valid PEM: block " + index + " has no '-----END CERTIFICATE-----'");
        }
        return end;
    }

    /**
     * @param labelEnd where the header's closing dashes start
     * @return the offset just after the footer, or -1 when there is none
     */
    private static int footerEnd(byte[] content, int labelEnd) {
        // From after the header's dashes: in "-----BEGIN CERTIFICATE-------END CERTIFICATE-----" the footer
        // would otherwise overlap the header, leaving a body of negative length.
        int footer = indexOf(content, CERTIFICATE_FOOTER, labelEnd + DASHES.length);
        return footer < 0 ? -1 : footer + CERTIFICATE_FOOTER.length;
    }

    private static Optional<CertificateBinding> parseBlock(CertificateFactory factory, byte[] content, int at, int end,
            Path file, int index, Consumer<String> warnings) throws IOException {
        int bodyStart = indexOf(content, DASHES, at + BEGIN.length) + DASHES.length;
        int bodyEnd = end - CERTIFICATE_FOOTER.length;
        String body = new String(content, bodyStart, bodyEnd - bodyStart, StandardCharsets.ISO_8859_1);
        return bind(decode(factory, body, file, index, content, at), file, index, warnings);
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

    /**
     * @param at where the block starts in {@code content}, to name its line in errors
     */
    private static X509Certificate decode(CertificateFactory factory, String body, Path file, int index,
            byte[] content, int at) throws IOException {
        // The JDK's reasons ("Could not parse certificate: java.io.IOException: Empty input") name its classes,
        // not the file: each failure is said here in the bundle's terms.
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(body.strip());
        } catch (IllegalArgumentException e) {
            throw invalid(file, index, content, at, "its body is not base64", e);
        }
        if (der.length == 0) {
            // The MIME decoder skips what is not base64: "!!!!" decodes to nothing too.
            throw invalid(file, index, content, at, body.isBlank()
                    ? "it has nothing between its BEGIN and END lines"
                    : "its body is not base64", null);
        }
        try {
            return (X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der));
        } catch (CertificateException | ClassCastException | IllegalArgumentException e) {
            throw invalid(file, index, content, at, "its body is not an X.509 certificate (damaged or cut short?)",
                    e);
        }
    }

    private static IOException invalid(Path file, int index, byte[] content, int at, String reason, Exception cause) {
        int line = 1;
        for (int i = 0; i < at; i++) {
            if (content[i] == '\n') {
                line++;
            }
        }
        return new IOException(file + ": not valid PEM: certificate " + index + " (line " + line + ") is invalid: "
                + reason, cause);
    }

    private static Optional<CertificateBinding> bind(X509Certificate certificate, Path file, int index,
            Consumer<String> warnings) {
        Optional<String> uid;
        try {
            uid = CertificateSubjects.uid(certificate);
        } catch (IllegalArgumentException e) {
            warnings.accept(file + ": certificate " + index + ": " + e.getMessage() + "; skipped");
            return Optional.empty();
        }
        if (uid.isEmpty()) {
            warnings.accept(file + ": certificate " + index + " ('"
                    + certificate.getSubjectX500Principal().getName() + "') has no UID; skipped");
            return Optional.empty();
        }
        try {
            return Optional.of(CertificateBinding.of(new NodeId(uid.get()), certificate.getPublicKey()));
        } catch (IllegalArgumentException e) {
            warnings.accept(file + ": certificate " + index + ": " + e.getMessage() + "; skipped");
            return Optional.empty();
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
