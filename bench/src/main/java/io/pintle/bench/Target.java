package io.pintle.bench;

import java.net.URI;
import java.util.Map;

/**
 * A server under test.
 *
 * @param name as printed ({@code Pintle}, {@code baseline})
 * @param base {@code https://127.0.0.1:<port>}
 * @param etags the current ETag of each path conditional rows ask for, as this server computes it
 */
record Target(String name, URI base, Map<String, String> etags) {
    Target {
        if (!"127.0.0.1".equals(base.getHost())) {
            throw new IllegalArgumentException("the benchmark only talks to 127.0.0.1, not " + base);
        }
        etags = Map.copyOf(etags);
    }

    /**
     * @param path a request path
     * @return its absolute URI on this server
     */
    URI uri(String path) {
        return base.resolve(path);
    }

    /**
     * @param path a path probed at start-up
     * @return its ETag on this server
     */
    String etag(String path) {
        String etag = etags.get(path);
        if (etag == null) {
            throw new IllegalStateException(name + " has no ETag for " + path);
        }
        return etag;
    }
}
