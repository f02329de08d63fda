package io.pintle.server.uploads;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Upload counts since start, by route and outcome, and bytes kept: what {@code /metrics}
 * ({@code pintle_uploads_total}, {@code pintle_upload_bytes_total}) and {@code /v1/status} show. One per server,
 * created at start; lock-free counters.
 */
public final class UploadTally {
    /** How an upload ended: a fixed set, a metric label. */
    public enum Result {
        /** Stored under a new name (201). */
        CREATED,
        /** Stored over a file of the same name (204). */
        REPLACED,
        /** No or wrong credentials (401). */
        UNAUTHORIZED,
        /** Refused at once: too many failed logins from the address lately (429, {@link LoginThrottle}). */
        THROTTLED,
        /** Refused: network, or a method other than PUT (403). */
        DENIED,
        /** Refused: a bad name, a body shorter than its length (400). */
        INVALID,
        /** Refused: over {@code [uploads] max_bytes} (413). */
        TOO_LARGE,
        /** The client went away or sent too slowly; nothing kept. */
        ABORTED,
        /** The disk was full (507); nothing kept. */
        NO_SPACE,
        /** The server failed to write it (500); nothing kept. */
        ERROR;

        private final String label = name().toLowerCase(Locale.ROOT).replace('_', '-');

        /** @return its label value */
        public String label() {
            return label;
        }
    }

    /** What the edge check ({@code [uploads] verify_signatures}) made of a report or an inventory pair. */
    public enum Verification {
        /** Its signature verified with the node's pinned key. */
        VERIFIED,
        /** Refused: a bad signature, another node's key, a node that is not the caller's (403). */
        REFUSED,
        /** Kept without a check: no key of the node here (a node below a sub-relay), or a name naming no node. */
        UNVERIFIABLE;

        private final String label = name().toLowerCase(Locale.ROOT);

        /** @return its label value */
        public String label() {
            return label;
        }
    }

    private final Map<UploadKind, Map<Result, LongAdder>> counts = new EnumMap<>(UploadKind.class);
    private final Map<UploadKind, Map<Verification, LongAdder>> verifications = new EnumMap<>(UploadKind.class);
    private final Map<UploadKind, LongAdder> bytes = new EnumMap<>(UploadKind.class);

    /** Every counter at zero. */
    public UploadTally() {
        for (UploadKind kind : UploadKind.values()) {
            Map<Result, LongAdder> byResult = new EnumMap<>(Result.class);
            for (Result result : Result.values()) {
                byResult.put(result, new LongAdder());
            }
            counts.put(kind, byResult);
            Map<Verification, LongAdder> byOutcome = new EnumMap<>(Verification.class);
            for (Verification outcome : Verification.values()) {
                byOutcome.put(outcome, new LongAdder());
            }
            verifications.put(kind, byOutcome);
            bytes.put(kind, new LongAdder());
        }
    }

    /**
     * @param kind the route
     * @param result how it ended
     * @param kept bytes stored under the final name (0 unless created or replaced)
     */
    public void count(UploadKind kind, Result result, long kept) {
        counts.get(kind).get(result).increment();
        if (kept > 0) {
            bytes.get(kind).add(kept);
        }
    }

    /**
     * @param kind the route
     * @param outcome what the edge check made of an upload
     */
    public void verification(UploadKind kind, Verification outcome) {
        verifications.get(kind).get(outcome).increment();
    }

    /**
     * @param kind a route
     * @param outcome an outcome of the edge check
     * @return how many uploads of that route it ended so
     */
    public long verifications(UploadKind kind, Verification outcome) {
        return verifications.get(kind).get(outcome).sum();
    }

    /**
     * @param kind a route
     * @param result an outcome
     * @return how many uploads of that route ended so
     */
    public long count(UploadKind kind, Result result) {
        return counts.get(kind).get(result).sum();
    }

    /**
     * @param kind a route
     * @return bytes stored through it
     */
    public long bytes(UploadKind kind) {
        return bytes.get(kind).sum();
    }

    /**
     * @param kind a route
     * @return its non-zero counts by outcome label, in the enum's order
     */
    public Map<String, Long> results(UploadKind kind) {
        Map<String, Long> view = new LinkedHashMap<>();
        for (Result result : Result.values()) {
            long value = count(kind, result);
            if (value > 0) {
                view.put(result.label(), value);
            }
        }
        return view;
    }
}
