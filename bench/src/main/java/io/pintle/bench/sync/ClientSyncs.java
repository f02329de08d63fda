package io.pintle.bench.sync;

/** Pintle's client-lib sync (manifest + changed files), once {@code PintleClient.sync} exists. */
final class ClientSyncs {
    private ClientSyncs() {}

    /** @return whether this build has it */
    static boolean available() {
        return false;
    }

    static Contestant contestant(String directoryPath, TlsFactory tls) {
        throw new UnsupportedOperationException("PintleClient.sync is not in this build");
    }
}
