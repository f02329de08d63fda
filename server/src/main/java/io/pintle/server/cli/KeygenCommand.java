package io.pintle.server.cli;

import io.pintle.server.nodes.KeyHash;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.tls.SelfSigned;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code pintle keygen}: a Rudder-style agent key and self-signed {@code UID=<id>} certificate. */
@Command(name = "keygen", mixinStandardHelpOptions = true,
        description = "Write a key and a self-signed certificate with subject UID=<id>, as Rudder agents have, "
                + "and print the key hash (sha256//...).")
public final class KeygenCommand implements Callable<Integer> {
    @Option(names = "--id", required = true, description = "node id for the certificate subject UID")
    String id;

    @Option(names = "--cert", required = true, paramLabel = "FILE", description = "certificate to write (PEM)")
    Path certificate;

    @Option(names = "--key", required = true, paramLabel = "FILE", description = "private key to write (PEM, mode 0600)")
    Path key;

    @Option(names = "--type", defaultValue = "rsa",
            description = "rsa (4096 bits, Rudder's default), rsa2048 or ec (P-256); default ${DEFAULT-VALUE}")
    String type;

    @Option(names = "--pkcs8", description = "write the key as PKCS#8 instead of PKCS#1 (RSA only; EC is always PKCS#8)")
    boolean pkcs8;

    @Option(names = "--force", description = "overwrite existing files")
    boolean force;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        NodeId nodeId;
        SelfSigned.KeyType keyType;
        try {
            nodeId = new NodeId(id);
            keyType = SelfSigned.KeyType.parse(type);
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("pintle keygen: " + e.getMessage());
            return ExitCodes.CONFIG_ERROR;
        }
        for (Path file : new Path[] {certificate, key}) {
            if (!force && Files.exists(file)) {
                spec.commandLine().getErr().println("pintle keygen: " + file + " exists (use --force to replace it)");
                return ExitCodes.CONFIG_ERROR;
            }
        }
        SelfSigned.Identity identity = SelfSigned.generate(keyType, nodeId.value());
        SelfSigned.writePrivateKey(key, identity.keyPair().getPrivate(), !pkcs8);
        SelfSigned.writeCertificates(certificate, identity.certificate());
        spec.commandLine().getOut().println(KeyHash.sha256(identity.certificate().getPublicKey()));
        return ExitCodes.OK;
    }
}
