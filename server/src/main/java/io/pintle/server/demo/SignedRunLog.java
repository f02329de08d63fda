package io.pintle.server.demo;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.HexFormat;
import org.bouncycastle.cms.CMSException;
import org.bouncycastle.cms.CMSProcessableByteArray;
import org.bouncycastle.cms.CMSSignedDataGenerator;
import org.bouncycastle.cms.jcajce.JcaSimpleSignerInfoGeneratorBuilder;
import org.bouncycastle.operator.OperatorCreationException;

/**
 * A run log signed as rudder-agent's {@code report.sh} signs it ({@code openssl smime -sign -text -nocerts}): a
 * {@code multipart/signed} message whose first part is the log as {@code text/plain} with CRLF line ends, and whose
 * second is a detached CMS signature (SHA-256, no certificate). For the demo's sample report, which the server
 * checks against the node's pinned key like any other.
 */
final class SignedRunLog {
    private SignedRunLog() {}

    /**
     * @param runLog the log's text
     * @param certificate the agent's certificate (names the signer)
     * @param key its private key
     * @return the S/MIME message, before gzip
     */
    static byte[] sign(String runLog, X509Certificate certificate, PrivateKey key) throws GeneralSecurityException {
        String text = "Content-Type: text/plain\r\n\r\n" + runLog.replace("\r\n", "\n").replace("\n", "\r\n");
        byte[] signed = text.getBytes(StandardCharsets.UTF_8);
        byte[] signature;
        try {
            String algorithm = key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
            CMSSignedDataGenerator generator = new CMSSignedDataGenerator();
            generator.addSignerInfoGenerator(new JcaSimpleSignerInfoGeneratorBuilder().build(algorithm, key,
                    certificate));
            signature = generator.generate(new CMSProcessableByteArray(signed), false).getEncoded();
        } catch (OperatorCreationException | CMSException | java.io.IOException e) {
            throw new GeneralSecurityException("cannot sign the sample report: " + e.getMessage(), e);
        }
        byte[] random = new byte[16];
        new SecureRandom().nextBytes(random);
        String boundary = "----" + HexFormat.of().withUpperCase().formatHex(random);
        ByteArrayOutputStream out = new ByteArrayOutputStream(signed.length + signature.length * 2 + 512);
        String head = "MIME-Version: 1.0\r\nContent-Type: multipart/signed; protocol=\"application/x-pkcs7-signature\"; "
                + "micalg=\"sha-256\"; boundary=\"" + boundary + "\"\r\n\r\nThis is an S/MIME signed message\r\n\r\n--"
                + boundary + "\r\n";
        out.writeBytes(head.getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(signed);
        String tail = "\r\n--" + boundary + "\r\nContent-Type: application/x-pkcs7-signature; name=\"smime.p7s\"\r\n"
                + "Content-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=\"smime.p7s\"\r\n\r\n"
                + Base64.getMimeEncoder(64, "\r\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(signature)
                + "\r\n\r\n--" + boundary + "--\r\n\r\n";
        out.writeBytes(tail.getBytes(StandardCharsets.US_ASCII));
        return out.toByteArray();
    }
}
