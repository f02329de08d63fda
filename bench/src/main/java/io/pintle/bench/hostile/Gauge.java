package io.pintle.bench.hostile;

/**
 * What the harness watches on the server: the gauges of issue 18's "done when", from {@code /metrics} on the
 * admin listener (descriptors from {@code /proc/<pid>/fd} when {@code process_open_fds} is not exported).
 */
enum Gauge {
    /** The victim's download holds one while it runs. */
    INFLIGHT_FILES("inflight files", "pintle_inflight_requests", "files", 1),
    QUEUED_FILES("queued files", "pintle_queued_requests", "files", 0),
    INFLIGHT_UPLOADS("inflight uploads", "pintle_inflight_requests", "uploads", 0),
    QUEUED_UPLOADS("queued uploads", "pintle_queued_requests", "uploads", 0),
    INFLIGHT_API("inflight api", "pintle_inflight_requests", "api", 0),
    CHANGE_WAITERS("change waiters", "pintle_change_waiters", null, 0),
    THREADS("threads", "jvm_threads_current", null, 0),
    /** The victim's connection: its socket, and with Conscrypt a pipe (two descriptors). */
    DESCRIPTORS("descriptors", "process_open_fds", null, 3);

    private final String label;
    private final String metric;
    private final String workClass;
    private final double victimShare;

    Gauge(String label, String metric, String workClass, double victimShare) {
        this.label = label;
        this.metric = metric;
        this.workClass = workClass;
        this.victimShare = victimShare;
    }

    /** @return what the victim's own download adds to the gauge while it runs */
    double victimShare() {
        return victimShare;
    }

    String label() {
        return label;
    }

    String metric() {
        return metric;
    }

    /** @return the {@code class} label's value, or null for a gauge without one */
    String workClass() {
        return workClass;
    }
}
