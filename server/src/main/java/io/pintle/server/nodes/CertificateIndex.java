package io.pintle.server.nodes;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * What one certificate bundle pins, and where each of its PEM blocks lies in the bytes it was read from, so that
 * the next reload of a bundle that gained one certificate parses one certificate, not twenty thousand: a block is
 * reused when its bytes are identical, which is checked by comparing them, not by a digest. Immutable; it keeps
 * the bundle's bytes (about the file's size in heap) for that comparison.
 */
public final class CertificateIndex {
    /** An index of nothing, to start from. */
    public static final CertificateIndex EMPTY = new CertificateIndex(Spans.empty());

    private final Spans<CertificateBinding> blocks;
    private final List<CertificateBinding> bindings;

    /**
     * @param blocks each block's binding (null when the certificate was skipped) and range (from its
     *     {@code -----BEGIN } to just after its {@code -----END CERTIFICATE-----})
     */
    CertificateIndex(Spans<CertificateBinding> blocks) {
        this.blocks = blocks;
        List<CertificateBinding> pinned = new ArrayList<>(blocks.size());
        for (CertificateBinding binding : blocks.items()) {
            if (binding != null) {
                pinned.add(binding);
            }
        }
        this.bindings = Collections.unmodifiableList(pinned);
    }

    /**
     * @param source the bundle's bytes; kept, not copied, and never modified
     * @param starts offset of each block's {@code -----BEGIN }
     * @param ends offset just after each block's {@code -----END CERTIFICATE-----}
     * @param blocks each block's binding, null when the certificate was skipped
     */
    CertificateIndex(byte[] source, int[] starts, int[] ends, CertificateBinding[] blocks) {
        this(new Spans<>(source, starts, ends, Arrays.asList(blocks)));
    }

    /** @return the keys the bundle pins, in file order (skipped certificates left out) */
    public List<CertificateBinding> bindings() {
        return bindings;
    }

    /** @return the number of PEM blocks, skipped ones included */
    public int blockCount() {
        return blocks.size();
    }

    /** @return each block's binding and range, for reuse by the next load */
    Spans<CertificateBinding> blocks() {
        return blocks;
    }
}
