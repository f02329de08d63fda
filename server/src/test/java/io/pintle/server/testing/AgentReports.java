package io.pintle.server.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;

/**
 * Run reports and inventories made as rudder-agent makes them, with the real {@code openssl}: a report is the run
 * log signed by {@code openssl smime -sign -text -nocerts} with the agent's certificate and key, then gzipped
 * ({@code share/lib/report.sh}); an inventory's {@code .sign} is rudder-sign's properties file over the
 * uncompressed inventory ({@code openssl dgst -sha512 -sign}).
 */
public final class AgentReports {
    private AgentReports() {}

    /**
     * @param dir where to write it
     * @param name its file name ({@code <date>@<node id>.log.gz})
     * @param signer whose certificate and key sign it
     * @param runLog the run log's text
     * @return the gzipped signed report
     */
    public static Path report(Path dir, String name, NodeKeys signer, String runLog) throws IOException {
        Path plain = Files.writeString(Files.createTempFile(dir, "runlog", ".log"), runLog);
        Path signed = dir.resolve(name.replaceFirst("\\.gz$", "") + ".signed");
        run(List.of("openssl", "smime", "-sign", "-text", "-nocerts", "-signer", signer.certificatePath().toString(),
                "-inkey", signer.keyPath().toString(), "-in", plain.toString(), "-out", signed.toString()));
        Path report = dir.resolve(name);
        gzip(Files.readAllBytes(signed), report);
        Files.delete(plain);
        Files.delete(signed);
        return report;
    }

    /**
     * @param dir where to write them
     * @param stem the inventory's name without extension ({@code <node id>_<date>})
     * @param signer whose key signs it
     * @param xml the inventory
     * @return the gzipped inventory ({@code <stem>.ocs.gz}); its signature is beside it ({@code <stem>.ocs.sign})
     */
    public static Path inventory(Path dir, String stem, NodeKeys signer, String xml) throws IOException {
        Path ocs = Files.writeString(dir.resolve(stem + ".ocs"), xml);
        Path signature = dir.resolve(stem + ".ocs.sig.tmp");
        run(List.of("openssl", "dgst", "-sha512", "-hex", "-sign", signer.keyPath().toString(), "-out",
                signature.toString(), ocs.toString()));
        String hex = Files.readString(signature).trim().replaceFirst(".*= ", "");
        Files.writeString(dir.resolve(stem + ".ocs.sign"), "header=rudder-signature-v1\nalgorithm=sha512\ndigest=" + hex
                + "\nhash_value=\nhostname=" + signer.name() + "\nkeydate=2026-12-01 10:00:00.000000000 +0000\n"
                + "keyid=00000000\n");
        Path gz = dir.resolve(stem + ".ocs.gz");
        gzip(Files.readAllBytes(ocs), gz);
        Files.delete(ocs);
        Files.delete(signature);
        return gz;
    }

    private static void gzip(byte[] content, Path target) throws IOException {
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(target))) {
            out.write(content);
        }
    }

    private static void run(List<String> command) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IOException(String.join(" ", command) + " failed: "
                        + new String(output, StandardCharsets.UTF_8));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
