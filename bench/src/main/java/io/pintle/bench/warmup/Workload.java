package io.pintle.bench.warmup;

import java.util.List;

/** What {@code ab} does to the server: the two shapes of agent traffic whose warm-up the issue asks for. */
enum Workload {
    /** 16 connections, each reused for every request (a sync client, or HTTP/1.1 keep-alive of any agent). */
    KEEP_ALIVE("keep-alive", "keep-alive small GET, 16 connections (ab -k -c 16)", 16, true,
            // ab keeps one record per request: room for 50,000 requests a second for the whole run.
            50_000),
    /** A TLS handshake and one request per connection, 8 at once: every rudder-client call of an agent. */
    NEW_CONNECTION("new-connection", "new TLS connection + 1 small GET, 8 at once (ab -c 8)", 8, false, 5_000);

    private final String label;
    private final String title;
    private final int concurrency;
    private final boolean keepAlive;
    private final int maxPerSecond;

    Workload(String label, String title, int concurrency, boolean keepAlive, int maxPerSecond) {
        this.label = label;
        this.title = title;
        this.concurrency = concurrency;
        this.keepAlive = keepAlive;
        this.maxPerSecond = maxPerSecond;
    }

    /** @return the name on the command line and in files */
    String label() {
        return label;
    }

    /** @return as the report prints it */
    String title() {
        return title;
    }

    /**
     * @param clientPem the node's certificate and key, in one PEM file
     * @param seconds how long ab runs
     * @param records where ab writes one line per request ({@code -g})
     * @param url the small file
     * @return ab's arguments, after "ab"
     */
    List<String> abArguments(String clientPem, int seconds, String records, String url) {
        List<String> args = new java.util.ArrayList<>();
        if (keepAlive) {
            args.add("-k");
        }
        // -t before -n: -t alone caps the run at 50,000 requests.
        args.addAll(List.of("-c", Integer.toString(concurrency), "-t", Integer.toString(seconds), "-n",
                Long.toString((long) maxPerSecond * seconds), "-r", "-q", "-d", "-S", "-E", clientPem, "-g", records,
                url));
        return args;
    }

    /**
     * @param label a name from {@link #label()}
     * @return the workload
     * @throws IllegalArgumentException when there is none of that name
     */
    static Workload of(String label) {
        for (Workload w : values()) {
            if (w.label.equals(label)) {
                return w;
            }
        }
        throw new IllegalArgumentException("no workload '" + label + "' (keep-alive, new-connection)");
    }
}
