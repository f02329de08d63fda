package io.pintle.bench.sync;

import io.pintle.client.PintleClient;
import io.pintle.client.SyncResult;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;

/**
 * Pintle's own client, {@code PintleClient.sync} from client-lib (manifest with {@code If-None-Match}, then the
 * archive or only the changed files, verified, staged and swapped in), with its defaults, over HTTP/2. A fresh
 * client per sync, as for an agent run; what it remembers between syncs is its sidecar file beside the
 * destination, which a cold sync deletes.
 */
final class ClientSyncs {
    private ClientSyncs() {}

    /**
     * @param directoryPath URL path of the tree's directory, without trailing slash
     * @param tls client TLS contexts
     * @return the contestant
     */
    static Contestant contestant(String directoryPath, TlsFactory tls) {
        return new Contestant() {
            @Override
            public String name() {
                return SyncReport.PINTLE_SYNC;
            }

            @Override
            public String server() {
                return Servers.PINTLE;
            }

            @Override
            public void forget() {
                // The sidecar beside the destination is what it remembers; SyncBench deletes it for a cold sync.
            }

            @Override
            public Outcome sync(Path destination, int port) throws Exception {
                PintleClient client = PintleClient.builder(URI.create("https://127.0.0.1:" + port))
                        .sslContext(tls.create())
                        .version(HttpClient.Version.HTTP_2)
                        .build();
                SyncResult result = client.sync(directoryPath, destination);
                String how = !result.changed() ? "unchanged" : result.usedArchive() ? "archive" : "per file";
                return new Outcome(result.requests(), how + ", " + result.filesDownloaded() + " files downloaded, "
                        + result.attempts() + " attempt(s)");
            }
        };
    }
}
