package io.pintle.server.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pintle.server.cfengine.CfengineKey;
import io.pintle.server.tls.SelfSigned;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.util.io.pem.PemObject;
import org.bouncycastle.util.io.pem.PemWriter;

/**
 * A real CFEngine agent from Debian's {@code cfengine3} (cf-agent, cf-key, cf-net), in a work directory of its own
 * ({@code CFENGINE_TEST_OVERRIDE_WORKDIR}): its key made by {@code cf-key}, its {@code ppkeys/} 0700 as cf-agent
 * demands, the server's key trusted with {@code cf-key -t}, as a bootstrapped agent holds it. Tests that use it are
 * skipped where cfengine3 is not installed ({@code .ci/run} installs it).
 */
public final class CfAgent {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private final Path workdir;

    private CfAgent(Path workdir) {
        this.workdir = workdir;
    }

    /** Skips the calling test when Debian's cfengine3 is not installed. */
    public static void assumeInstalled() {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/cf-agent")) && Files.isExecutable(Path.of("/usr/bin/cf-key")),
                "cfengine3 is not installed: apt-get install cfengine3");
    }

    /**
     * @param workdir an absent or empty directory
     * @return an agent with a new key
     * @throws Exception when cf-key fails
     */
    public static CfAgent create(Path workdir) throws Exception {
        assumeInstalled();
        Files.createDirectories(workdir);
        Path ppkeys = Files.createDirectories(workdir.resolve("ppkeys"));
        Files.setPosixFilePermissions(ppkeys, PosixFilePermissions.fromString("rwx------"));
        // cf-agent validates a policy with the cf-promises of its work directory's bin/.
        Path bin = Files.createDirectories(workdir.resolve("bin"));
        Files.createSymbolicLink(bin.resolve("cf-promises"), Path.of("/usr/bin/cf-promises"));
        CfAgent agent = new CfAgent(workdir);
        Result keygen = agent.run("/usr/bin/cf-key", "-f", ppkeys.resolve("localhost").toString());
        if (keygen.exit() != 0) {
            throw new IllegalStateException("cf-key failed: " + keygen.output());
        }
        return agent;
    }

    /**
     * Gives the agent another key (a root's cf-runagent runs with the server's own agent key).
     *
     * @param pair the key pair
     */
    public void useKey(KeyPair pair) throws IOException {
        SelfSigned.writePrivateKey(workdir.resolve("ppkeys/localhost.priv"), pair.getPrivate(), true);
        RSAPublicKey key = (RSAPublicKey) pair.getPublic();
        StringWriter pem = new StringWriter();
        try (PemWriter writer = new PemWriter(pem)) {
            writer.writeObject(new PemObject("RSA PUBLIC KEY",
                    new org.bouncycastle.asn1.pkcs.RSAPublicKey(key.getModulus(), key.getPublicExponent())
                            .getEncoded()));
        }
        Files.writeString(workdir.resolve("ppkeys/localhost.pub"), pem.toString());
    }

    /**
     * @param args cf-runagent's arguments ({@code -H 127.0.0.1:port -D info})
     * @return exit code and output
     */
    public Result runagent(String... args) throws Exception {
        // cf-runagent reads the agent's policy (body runagent control) before it calls: a policy of nothing.
        Path promises = workdir.resolve("inputs/promises.cf");
        if (!Files.exists(promises)) {
            Files.createDirectories(promises.getParent());
            Files.writeString(promises, "body common control { bundlesequence => { \"noop\" }; }\n"
                    + "bundle agent noop { }\n");
            Files.setPosixFilePermissions(promises, PosixFilePermissions.fromString("rw-------"));
        }
        List<String> command = new ArrayList<>(List.of("/usr/bin/cf-runagent"));
        command.addAll(List.of(args));
        return run(command.toArray(new String[0]));
    }

    /** @return the work directory */
    public Path workdir() {
        return workdir;
    }

    /** @return the agent's key pair ({@code ppkeys/localhost.priv}) */
    public KeyPair keyPair() throws IOException {
        return CfengineKey.readPrivate(workdir.resolve("ppkeys/localhost.priv"));
    }

    /** @return the agent's key digest, as {@code cf-key -p} prints it */
    public String digest() throws Exception {
        Result printed = run("/usr/bin/cf-key", "-p", workdir.resolve("ppkeys/localhost.pub").toString());
        return printed.output().strip();
    }

    /**
     * @param uid the node id
     * @return a certificate of the agent's key, to pin it for a node in a sandbox (Rudder's agent.cert)
     */
    public X509Certificate certificate(String uid) throws IOException {
        Instant now = Instant.now();
        return SelfSigned.certificate(keyPair(), SelfSigned.subject(uid), now.minus(Duration.ofMinutes(5)),
                now.plus(Duration.ofDays(365)));
    }

    /**
     * Makes the agent trust a server key, as its bootstrap did: {@code cf-key -t <ip>:<key.pub>} (writes
     * {@code ppkeys/root-MD5=...pub}).
     *
     * @param ip the server's address
     * @param key the server's public key
     */
    public void trust(String ip, RSAPublicKey key) throws Exception {
        Path file = workdir.resolve("server-key.pub");
        StringWriter pem = new StringWriter();
        try (PemWriter writer = new PemWriter(pem)) {
            writer.writeObject(new PemObject("RSA PUBLIC KEY",
                    new org.bouncycastle.asn1.pkcs.RSAPublicKey(key.getModulus(), key.getPublicExponent())
                            .getEncoded()));
        }
        Files.writeString(file, pem.toString());
        Result trusted = run("/usr/bin/cf-key", "-t", ip + ":" + file);
        if (trusted.exit() != 0) {
            throw new IllegalStateException("cf-key -t failed: " + trusted.output());
        }
    }

    /**
     * Runs a policy: {@code cf-agent -K -f <file>} (no locks, so that a run right after another runs again).
     *
     * @param name the policy file's name in the work directory
     * @param policy its text
     * @param extra more options ({@code -I}, {@code -v})
     * @return exit code and output
     */
    public Result agent(String name, String policy, String... extra) throws Exception {
        Path file = workdir.resolve(name);
        Files.writeString(file, policy, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        List<String> command = new ArrayList<>(List.of("/usr/bin/cf-agent", "-K", "-f", file.toString()));
        command.addAll(List.of(extra));
        return run(command.toArray(new String[0]));
    }

    /**
     * @param args cf-net's arguments ({@code -H 127.0.0.1:port stat /path})
     * @return exit code and output
     */
    public Result net(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("/usr/bin/cf-net"));
        command.addAll(List.of(args));
        return run(command.toArray(new String[0]));
    }

    private Result run(String... command) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("CFENGINE_TEST_OVERRIDE_WORKDIR", workdir.toString());
        builder.directory(workdir.toFile());
        Process process = builder.start();
        process.getOutputStream().close();
        byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " ran past " + TIMEOUT);
        }
        return new Result(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }

    /**
     * @param exit the exit code
     * @param output stdout and stderr
     */
    public record Result(int exit, String output) {}
}
