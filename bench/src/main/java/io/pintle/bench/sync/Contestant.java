package io.pintle.bench.sync;

import java.nio.file.Path;

/** One way of bringing a local directory up to date with the server's tree. */
public interface Contestant {
    /** @return the column title */
    String name();

    /** @return which server it talks to: {@link Servers#CFENGINE}, {@link Servers#NGINX} or {@link Servers#PINTLE} */
    String server();

    /** Forgets what the client remembers from previous syncs (ETags): the next sync is a cold one. */
    void forget();

    /**
     * Syncs {@code destination} (an existing directory) from the tree, through 127.0.0.1:{@code port}.
     *
     * @param destination the local directory
     * @param port the server's port, or the delaying proxy's in front of it
     * @return what the client can tell of what it did
     * @throws Exception on any failure
     */
    Outcome sync(Path destination, int port) throws Exception;

    /**
     * @param requests the requests the client sent, or -1 where it cannot tell
     * @param detail how it went, for the progress output, or null
     */
    record Outcome(long requests, String detail) {
        /** Where the client cannot tell. */
        static final Outcome UNKNOWN = new Outcome(-1, null);
    }

    /** Server names, which are also the keys of the proxies in front of them. */
    final class Servers {
        static final String CFENGINE = "cf-serverd";
        static final String NGINX = "nginx";
        static final String PINTLE = "Pintle";

        private Servers() {}
    }
}
