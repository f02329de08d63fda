package io.pintle.server.nodes;

import java.util.List;
import java.util.Map;

/**
 * What one certificate bundle pins, plus the parsed form of each of its PEM blocks keyed by the block's digest, so
 * that the next reload of a bundle that gained one certificate parses one certificate, not twenty thousand.
 *
 * @param bindings the keys the bundle pins, in file order
 * @param blocks binding of each certificate block that yielded one, by the sha256 (hex) of its PEM text
 */
public record CertificateIndex(List<CertificateBinding> bindings, Map<String, CertificateBinding> blocks) {
    /** An index of nothing, to start from. */
    public static final CertificateIndex EMPTY = new CertificateIndex(List.of(), Map.of());

    public CertificateIndex {
        bindings = List.copyOf(bindings);
        blocks = Map.copyOf(blocks);
    }
}
