package io.pintle.server.delivery;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What the server knows of one node's traffic. Immutable: each event makes a new record.
 *
 * @param lastRequest its last request on any door, or null when none was seen
 * @param policies the last answer to a fetch of its policies ({@link PolicyEntry}), or null when none was seen
 * @param uploads its last upload of each kind ({@code inventories}, {@code inventory-updates}, {@code reports}),
 *     by kind
 */
public record NodeRecord(Seen lastRequest, Fetch policies, Map<String, Seen> uploads) {
    /** A node never seen. */
    public static final NodeRecord NONE = new NodeRecord(null, null, Map.of());

    public NodeRecord {
        uploads = Map.copyOf(uploads);
    }

    /**
     * One request.
     *
     * @param time when it was answered
     * @param address the client's address
     * @param what the route's label (or, for an upload, the file name)
     * @param status the status answered (CFEngine's door: 200 when served, 403 when refused)
     */
    public record Seen(Instant time, String address, String what, int status) {
        public Seen {
            Objects.requireNonNull(time);
            Objects.requireNonNull(address);
            Objects.requireNonNull(what);
        }
    }

    /**
     * One fetch of a node's policies that the node ended with a known version of.
     *
     * @param path the entry, relative to the node's directory ({@link PolicyEntry})
     * @param etag the entity tag of what the node holds after it: the one sent (200) or the one it already had
     *     (304, a CFEngine digest match)
     * @param status 200 (sent) or 304 (it had it)
     * @param time when
     * @param door {@code https} or {@code cfengine}
     */
    public record Fetch(String path, String etag, int status, Instant time, String door) {
        public Fetch {
            Objects.requireNonNull(path);
            Objects.requireNonNull(etag);
            Objects.requireNonNull(time);
            Objects.requireNonNull(door);
        }
    }

    NodeRecord withRequest(Seen seen) {
        return new NodeRecord(seen, policies, uploads);
    }

    NodeRecord withFetch(Fetch fetch) {
        return new NodeRecord(lastRequest, fetch, uploads);
    }

    NodeRecord withUpload(String kind, Seen seen) {
        Map<String, Seen> next = new TreeMap<>(uploads);
        next.put(kind, seen);
        return new NodeRecord(lastRequest, policies, next);
    }
}
