package io.pintle.server.cli;

import io.pintle.api.KeyPins;
import io.pintle.api.Routes;
import io.pintle.client.DirectorySync;
import io.pintle.client.PintleClient;
import io.pintle.client.ProblemException;
import io.pintle.client.SyncException;
import io.pintle.client.SyncResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpConnectTimeoutException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Callable;
import javax.net.ssl.SSLHandshakeException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code pintle sync}: makes a local directory an exact copy of a directory a Pintle server serves, as a Rudder
 * agent would fetch its policies: mutual TLS with the agent's key, the server's key pinned, only what differs
 * downloaded, the new tree swapped in atomically (see {@link DirectorySync}). Prints one summary line.
 */
@Command(name = "sync", mixinStandardHelpOptions = true,
        description = "Make LOCAL an exact copy of the server directory REMOTE (for example /policies/<uuid>/rules): "
                + "one request when nothing changed, only the changed files otherwise, verified against the "
                + "server's manifest and swapped in atomically. A failed sync leaves LOCAL as it was.",
        footer = {"", "Exit codes: 0 synced (or already up to date), 1 sync failed (server refused, content kept "
                + "changing), 2 bad options or unreadable key material, 3 server unreachable or not the pinned one."})
public final class SyncCommand implements Callable<Integer> {
    @Option(names = "--server", required = true, paramLabel = "URL",
            description = "the server, for example https://relay.example.org:443")
    URI server;

    @Option(names = "--cert", required = true, paramLabel = "FILE",
            description = "client certificate, PEM (the agent's agent.cert)")
    Path certificate;

    @Option(names = "--key", required = true, paramLabel = "FILE",
            description = "client private key, PEM (the agent's localhost.priv)")
    Path key;

    @Option(names = "--pin", required = true, paramLabel = "sha256//BASE64",
            description = "accepted server public key, as curl's --pinnedpubkey; repeat for a key rotation")
    List<String> pins;

    @Option(names = "--parallel", defaultValue = "" + DirectorySync.DEFAULT_PARALLELISM, paramLabel = "N",
            description = "files downloaded at once when syncing file by file (default ${DEFAULT-VALUE})")
    int parallel;

    @Option(names = "--wait", paramLabel = "SECONDS",
            description = "wait up to SECONDS (at most " + Routes.MAX_WAIT_SECONDS + ") for the server's tree to "
                    + "change before syncing; exits 0 unchanged at the timeout")
    Integer waitSeconds;

    @Parameters(index = "0", paramLabel = "REMOTE", description = "directory on the server, a URL path")
    String remote;

    @Parameters(index = "1", paramLabel = "LOCAL", description = "local directory (created if missing)")
    Path local;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String usage = usageError();
        if (usage != null) {
            err.println("pintle sync: " + usage);
            return ExitCodes.CONFIG_ERROR;
        }
        PintleClient client;
        try {
            PintleClient.Builder builder = PintleClient.builder(server).identity(certificate, key);
            pins.forEach(builder::pin);
            client = builder.build();
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            err.println("pintle sync: cannot use the key material (" + certificate + ", " + key + "): "
                    + e.getMessage());
            return ExitCodes.CONFIG_ERROR;
        }
        DirectorySync sync = client.directorySync(parallel);
        SyncResult result;
        try {
            result = waitSeconds == null
                    ? sync.sync(remote, local)
                    : sync.syncWhenChanged(remote, local, Duration.ofSeconds(waitSeconds));
        } catch (ProblemException e) {
            err.println("pintle sync: the server refused: " + e.getMessage() + "; " + local + " unchanged");
            return ExitCodes.SYNC_FAILED;
        } catch (SyncException e) {
            err.println("pintle sync: " + e.getMessage());
            return unreachable(e) ? ExitCodes.STARTUP_FAILURE : ExitCodes.SYNC_FAILED;
        } catch (IOException e) {
            err.println("pintle sync: " + e + "; " + local + " unchanged");
            return ExitCodes.SYNC_FAILED;
        }
        out.println(summary(result));
        return ExitCodes.OK;
    }

    private String usageError() {
        if (!"https".equalsIgnoreCase(server.getScheme()) || server.getHost() == null) {
            return "--server must be an https:// URL, not '" + server + "'";
        }
        for (String pin : pins) {
            if (!validPin(pin)) {
                return "--pin must be sha256// then the base64 SHA-256 of a public key, not '" + pin + "'";
            }
        }
        if (parallel < 1) {
            return "--parallel must be at least 1";
        }
        if (waitSeconds != null && (waitSeconds < 1 || waitSeconds > Routes.MAX_WAIT_SECONDS)) {
            return "--wait must be from 1 to " + Routes.MAX_WAIT_SECONDS + " seconds";
        }
        return null;
    }

    private static boolean validPin(String pin) {
        if (!pin.startsWith(KeyPins.SHA256_PREFIX)) {
            return false;
        }
        try {
            return Base64.getDecoder().decode(pin.substring(KeyPins.SHA256_PREFIX.length())).length == 32;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Whether every attempt failed before reaching the (pinned) server: nothing to blame the content for. */
    private static boolean unreachable(SyncException e) {
        for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof ConnectException || cause instanceof HttpConnectTimeoutException
                    || cause instanceof SSLHandshakeException) {
                return true;
            }
        }
        return false;
    }

    private String summary(SyncResult result) {
        return String.format(
                "synced %s -> %s: %s, %d file%s downloaded (%d bytes%s), %d removed, %d request%s, etag %s",
                remote, local, result.changed() ? "updated" : "already up to date",
                result.filesDownloaded(), result.filesDownloaded() == 1 ? "" : "s", result.bytesDownloaded(),
                result.usedArchive() ? ", as one archive" : "", result.removed(),
                result.requests(), result.requests() == 1 ? "" : "s", result.etag());
    }
}
