package io.pintle.bench.channels;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What one run measured, filled in phase by phase by {@link ChannelsBench} and read by the report and the plot
 * once the run is over. Times are nanoseconds from the phase's start (the POST; the end of the archives' rewrite).
 */
final class ChannelsResult {
    final ChannelsOptions options;
    final Instant started;
    Instant finished;
    double generationSeconds;
    String config;
    String serverCommand;
    ProcessSample serverAtStart;
    ProcessSample clientAtStart;
    ProcessSample[] rampServer;
    ProcessSample[] rampClient;
    int parkedAfterRamp;
    int connectFailures;
    String firstFailure;
    ProcessSample[] idleServer;
    ProcessSample[] idleClient;
    double idleLoopCpuMillis;
    com.fasterxml.jackson.databind.JsonNode idleStatus;
    int idlePolling;
    String idleHeap = "";
    int runHttpStatus;
    long doneNanos = -1;
    String doneEvent;
    Map<String, Integer> runStatuses = Map.of();
    String fanHistogram = "";
    ProcessSample[] fanServer;
    ProcessSample[] fanClient;
    long[] runOrders = new long[0];
    long[] runReports = new long[0];
    double changeWriteSeconds;
    final List<long[]> statusSeries = new ArrayList<>();
    ProcessSample[] updServer;
    ProcessSample[] updClient;
    long[] updateNanos = new long[0];
    com.fasterxml.jackson.databind.JsonNode finalStatus;
    ProcessSample serverAtEnd;
    ProcessSample clientAtEnd;
    /** orders, reports, retried, unexpected answers, failures, closed by the server, polls answered 204. */
    long[] clientTotals = new long[7];
    String lastFailure;
    int serverLogErrors;
    int serverLogWarnings;

    ChannelsResult(ChannelsOptions options, Instant started) {
        this.options = options;
        this.started = started;
    }

    /** @return the received times of one phase's events, sorted, without the nodes that got none */
    static long[] received(long[] nanos) {
        return Arrays.stream(nanos).filter(n -> n > 0).sorted().toArray();
    }

    /** @return the q-quantile (nearest rank) of sorted values, or -1 when there are none */
    static long quantile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return -1;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    /** @return update orders received in each second after the change */
    int[] updatesPerSecond() {
        long last = Arrays.stream(updateNanos).max().orElse(0);
        int[] perSecond = new int[(int) (last / 1_000_000_000L) + 1];
        for (long nanos : updateNanos) {
            perSecond[(int) (nanos / 1_000_000_000L)]++;
        }
        return perSecond;
    }

    /** @return whether every channel opened, every node got and reported its order, and every update came */
    boolean clean() {
        int nodes = options.nodes();
        return parkedAfterRamp == nodes && received(runOrders).length == nodes && received(runReports).length == nodes
                && updateNanos.length == nodes && serverLogErrors == 0;
    }
}
