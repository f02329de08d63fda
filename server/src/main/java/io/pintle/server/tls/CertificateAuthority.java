package io.pintle.server.tls;

import java.io.IOException;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.CRLReason;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v2CRLBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CRLConverter;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A small certificate authority, for what Rudder's certificate-validation mode expects of an organisation's PKI: a
 * root, intermediates below it, node certificates with the node id in the subject {@code UID} or in a SAN, and
 * CRLs. Used by {@code pintle demo --ca}, the tests and the benchmarks; Pintle itself never issues certificates
 * for a fleet.
 *
 * @param name the CA's subject
 * @param keyPair its key pair
 * @param certificate its certificate (self-signed for a root)
 * @param chain its certificate then the ones above it, up to and including the root
 */
public record CertificateAuthority(X500Name name, KeyPair keyPair, X509Certificate certificate,
        List<X509Certificate> chain) {
    private static final SecureRandom RANDOM = new SecureRandom();

    public CertificateAuthority {
        chain = List.copyOf(chain);
    }

    /**
     * @param type key algorithm
     * @param commonName the CA's common name
     * @param validity how long from now (less five minutes) it is valid
     * @return a self-signed root CA
     */
    public static CertificateAuthority root(SelfSigned.KeyType type, String commonName, Duration validity) {
        KeyPair pair = SelfSigned.keyPair(type);
        X500Name name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, commonName).build();
        Instant now = Instant.now();
        X509Certificate certificate = sign(name, pair, name, pair.getPublic(), now.minus(Duration.ofMinutes(5)),
                now.plus(validity), true, List.of());
        return new CertificateAuthority(name, pair, certificate, List.of(certificate));
    }

    /**
     * @param type key algorithm
     * @param commonName the intermediate's common name
     * @return a CA signed by this one, valid as long as this one
     */
    public CertificateAuthority intermediate(SelfSigned.KeyType type, String commonName) {
        KeyPair pair = SelfSigned.keyPair(type);
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, commonName).build();
        X509Certificate issued = sign(name, keyPair, subject, pair.getPublic(),
                certificate.getNotBefore().toInstant(), certificate.getNotAfter().toInstant(), true, List.of());
        List<X509Certificate> above = new java.util.ArrayList<>();
        above.add(issued);
        above.addAll(chain);
        return new CertificateAuthority(subject, pair, issued, above);
    }

    /**
     * Issues a node certificate.
     *
     * @param key the node's public key
     * @param subject its subject (use {@link #subject(String, String)})
     * @param sans its subject alternative names (DNS or URI), possibly none
     * @param notBefore start of validity
     * @param notAfter end of validity
     * @return the certificate
     */
    public X509Certificate issue(PublicKey key, X500Name subject, List<GeneralName> sans, Instant notBefore,
            Instant notAfter) {
        return sign(name, keyPair, subject, key, notBefore, notAfter, false, sans);
    }

    /**
     * @param key the node's public key
     * @param subject its subject
     * @param sans its subject alternative names
     * @return a certificate valid from five minutes ago for {@link SelfSigned#RUDDER_VALIDITY}
     */
    public X509Certificate issue(PublicKey key, X500Name subject, List<GeneralName> sans) {
        Instant now = Instant.now();
        return issue(key, subject, sans, now.minus(Duration.ofMinutes(5)), now.plus(SelfSigned.RUDDER_VALIDITY));
    }

    /**
     * @param uid the node id for the subject's {@code UID}, or null for none
     * @param commonName a common name, or null for none
     * @return the subject
     */
    public static X500Name subject(String uid, String commonName) {
        X500NameBuilder builder = new X500NameBuilder(BCStyle.INSTANCE);
        if (commonName != null) {
            builder.addRDN(BCStyle.CN, commonName);
        }
        if (uid != null) {
            builder.addRDN(BCStyle.UID, uid);
        }
        return builder.build();
    }

    /**
     * @param host a DNS name
     * @return a DNS SAN
     */
    public static GeneralName dns(String host) {
        return new GeneralName(GeneralName.dNSName, host);
    }

    /**
     * @param address an IP address literal
     * @return an IP address SAN (what a client that checks the server's name against its address needs)
     */
    public static GeneralName ip(String address) {
        return new GeneralName(GeneralName.iPAddress, address);
    }

    /**
     * @param uri a URI
     * @return a URI SAN
     */
    public static GeneralName uri(String uri) {
        return new GeneralName(GeneralName.uniformResourceIdentifier, uri);
    }

    /**
     * @param revoked serial numbers of revoked certificates this CA issued
     * @param thisUpdate when the list is issued
     * @param nextUpdate when the next one is due
     * @return the CRL, signed by this CA
     */
    public X509CRL crl(Collection<BigInteger> revoked, Instant thisUpdate, Instant nextUpdate) {
        try {
            X509v2CRLBuilder builder = new X509v2CRLBuilder(name, Date.from(thisUpdate));
            builder.setNextUpdate(Date.from(nextUpdate));
            for (BigInteger serial : revoked) {
                builder.addCRLEntry(serial, Date.from(thisUpdate), CRLReason.keyCompromise);
            }
            builder.addExtension(Extension.authorityKeyIdentifier, false,
                    new JcaX509ExtensionUtils().createAuthorityKeyIdentifier(certificate));
            return new JcaX509CRLConverter().getCRL(builder.build(signer(keyPair)));
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot issue a CRL", e);
        }
    }

    /**
     * @param revoked serial numbers of revoked certificates
     * @return a CRL issued now, due again in a day
     */
    public X509CRL crl(Collection<BigInteger> revoked) {
        Instant now = Instant.now().minus(Duration.ofMinutes(1));
        return crl(revoked, now, now.plus(Duration.ofDays(1)));
    }

    /**
     * Writes CRLs as PEM, concatenated, replacing the file.
     *
     * @param file destination
     * @param crls the lists
     * @throws IOException on write errors
     */
    public static void writeCrls(Path file, X509CRL... crls) throws IOException {
        Path temporary = file.resolveSibling("." + file.getFileName() + ".tmp");
        try (Writer out = Files.newBufferedWriter(temporary, StandardCharsets.US_ASCII);
                JcaPEMWriter pem = new JcaPEMWriter(out)) {
            for (X509CRL crl : crls) {
                pem.writeObject(crl);
            }
        }
        Files.move(temporary, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    private static X509Certificate sign(X500Name issuer, KeyPair issuerKeys, X500Name subject, PublicKey key,
            Instant notBefore, Instant notAfter, boolean ca, List<GeneralName> sans) {
        try {
            JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
            JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(issuer,
                    new BigInteger(64, RANDOM).abs().add(BigInteger.ONE), Date.from(notBefore), Date.from(notAfter),
                    subject, key);
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
            builder.addExtension(Extension.subjectKeyIdentifier, false, extensions.createSubjectKeyIdentifier(key));
            builder.addExtension(Extension.authorityKeyIdentifier, false,
                    extensions.createAuthorityKeyIdentifier(issuerKeys.getPublic()));
            builder.addExtension(Extension.keyUsage, true, ca
                    ? new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign)
                    : new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            if (!sans.isEmpty()) {
                builder.addExtension(Extension.subjectAlternativeName, false,
                        new GeneralNames(sans.toArray(new GeneralName[0])));
            }
            return new JcaX509CertificateConverter().getCertificate(builder.build(signer(issuerKeys)));
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot issue a certificate", e);
        }
    }

    private static ContentSigner signer(KeyPair keys) {
        try {
            String algorithm = keys.getPrivate().getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
            return new JcaContentSignerBuilder(algorithm).build(keys.getPrivate());
        } catch (OperatorCreationException e) {
            throw new IllegalStateException("cannot sign", e);
        }
    }
}
