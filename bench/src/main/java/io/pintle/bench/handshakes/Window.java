package io.pintle.bench.handshakes;

import io.pintle.server.tls.SelfSigned;
import java.util.List;
import java.util.Map;

/**
 * One measured window of one row.
 *
 * @param mode the row's trust mode
 * @param serverKey the row's server key type
 * @param round which round (1-based)
 * @param connections connections s_time completed, all processes together
 * @param seconds wall time of the window
 * @param ok 200 answers the server counted meanwhile
 * @param others other answers the server counted meanwhile, by status
 * @param tls13 TLS 1.3 handshakes the server counted meanwhile
 * @param serverCores the server process's CPU time over the wall time (1 = one core)
 * @param generatorCores the s_time processes' CPU time over the wall time
 * @param serverCoreBusy the server's core busy share, kernel included (NaN when not pinned to one core)
 * @param generatorCoreBusy the generator's core busy share, kernel included (NaN when not pinned to one core)
 * @param failures what went wrong with s_time processes, if anything
 * @param otherCores CPU the machine's other processes took meanwhile, in cores ({@link OtherLoad})
 * @param attempts how many times the window was run (it is repeated when other processes took CPU)
 */
record Window(Mode mode, SelfSigned.KeyType serverKey, int round, long connections, double seconds, long ok,
        Map<Integer, Long> others, long tls13, double serverCores, double generatorCores, double serverCoreBusy,
        double generatorCoreBusy, List<String> failures, double otherCores, int attempts) {
    Window {
        others = Map.copyOf(others);
        failures = List.copyOf(failures);
    }

    /** @return handshakes (connections with one GET) per second */
    double rate() {
        return connections / seconds;
    }

    /** @return server CPU milliseconds per handshake */
    double serverMillisPerHandshake() {
        return serverCores * seconds * 1e3 / Math.max(1, connections);
    }

    /**
     * @return whether every connection got its 200 and nothing else was answered: the server's count may differ
     *     from s_time's by the connections in flight when a process stopped (one per process at most)
     */
    boolean clean(int parallel) {
        return failures.isEmpty() && others.isEmpty() && connections > 0 && Math.abs(ok - connections) <= parallel;
    }
}
