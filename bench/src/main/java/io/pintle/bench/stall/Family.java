package io.pintle.bench.stall;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The route families a Rudder node calls, each as the request an agent repeats: conditional where the agent has a
 * copy (304), a hash check where relayd's API has one.
 */
enum Family {
    /** {@code rudder agent update}'s policies archive, unchanged. */
    RULES("rules", "GET /policies/<node>/rules/rudder.tar.bz2, If-None-Match", 304),
    /** The shared policy library, unchanged. */
    COMMON("common", "GET /common/policies-library-linux.tar.bz2, If-None-Match", 304),
    /** The server's id, as agents ask it. */
    UUID("uuid", "GET /uuid", 200),
    /** A shared-folder file ({@code download-shared-file}), unchanged. */
    SHARED_FOLDER("shared-folder", "GET /rudder/relay-api/shared-folder/<f>, If-None-Match", 304),
    /** The Windows agent's check of a shared-folder file by its digest. */
    SHARED_FOLDER_HASH("shared-folder-hash", "HEAD /rudder/relay-api/shared-folder/<f>?hash=<sha256>", 304),
    /** Pintle's manifest of a small policies directory, unchanged. */
    MANIFEST("manifest", "GET /policies/<node>/rules/cfengine-community/?view=manifest, If-None-Match", 304),
    /** ncf's check that a node-to-node shared file is stored. */
    SHARED_FILES_HASH("shared-files-hash", "HEAD /rudder/relay-api/shared-files/<t>/<s>/<id>?hash=<sha256>", 200),
    /** Pintle's debugging entry point. */
    WHOAMI("whoami", "GET /v1/whoami", 200);

    private final String label;
    private final String request;
    private final int expected;

    Family(String label, String request, int expected) {
        this.label = label;
        this.request = request;
        this.expected = expected;
    }

    /** @return the name on the command line and in the report */
    String label() {
        return label;
    }

    /** @return the request, with placeholders for node, file and digest */
    String request() {
        return request;
    }

    /** @return the request's method */
    String method() {
        return request.substring(0, request.indexOf(' '));
    }

    /** @return whether the request carries the current ETag in {@code If-None-Match} */
    boolean conditional() {
        return request.endsWith("If-None-Match");
    }

    /** @return the status every answer must have */
    int expected() {
        return expected;
    }

    static Family named(String name) {
        for (Family family : values()) {
            if (family.label.equals(name.toLowerCase(Locale.ROOT))) {
                return family;
            }
        }
        throw new IllegalArgumentException("no family '" + name + "'; families: " + names());
    }

    static String names() {
        return Arrays.stream(values()).map(Family::label).collect(Collectors.joining(","));
    }
}
