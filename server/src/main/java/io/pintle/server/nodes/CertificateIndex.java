package io.pintle.server.nodes;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * What one certificate bundle pins, and where each of its PEM blocks lies in the bytes it was read from, so that
 * the next reload of a bundle that gained one certificate parses one certificate, not twenty thousand: a block is
 * reused when its bytes are identical, which is checked by comparing them, not by a digest. Immutable; it keeps
 * the bundle's bytes (about the file's size in heap) for that comparison.
 */
public final class CertificateIndex {
    /** An index of nothing, to start from. */
    public static final CertificateIndex EMPTY =
            new CertificateIndex(new byte[0], new int[0], new int[0], new CertificateBinding[0]);

    private final byte[] source;
    private final int[] starts;
    private final int[] ends;
    private final CertificateBinding[] blocks;
    private final List<CertificateBinding> bindings;

    /**
     * @param source the bundle's bytes; kept, not copied, and never modified
     * @param starts offset of each block's {@code -----BEGIN }
     * @param ends offset just after each block's {@code -----END CERTIFICATE-----}
     * @param blocks each block's binding, null when the certificate was skipped
     */
    CertificateIndex(byte[] source, int[] starts, int[] ends, CertificateBinding[] blocks) {
        if (starts.length != ends.length || starts.length != blocks.length) {
            throw new IllegalArgumentException("one start, end and binding per block");
        }
        this.source = Objects.requireNonNull(source);
        this.starts = starts;
        this.ends = ends;
        this.blocks = blocks;
        List<CertificateBinding> pinned = new ArrayList<>(blocks.length);
        for (CertificateBinding binding : blocks) {
            if (binding != null) {
                pinned.add(binding);
            }
        }
        this.bindings = Collections.unmodifiableList(pinned);
    }

    /** @return the keys the bundle pins, in file order (skipped certificates left out) */
    public List<CertificateBinding> bindings() {
        return bindings;
    }

    /** @return the number of PEM blocks, skipped ones included */
    public int blockCount() {
        return blocks.length;
    }

    int length(int block) {
        return ends[block] - starts[block];
    }

    CertificateBinding binding(int block) {
        return blocks[block];
    }

    /** @return whether {@code content} holds, from {@code at}, exactly the bytes of this index's block */
    boolean sameBlock(int block, byte[] content, int at) {
        int length = length(block);
        return at + length <= content.length
                && Arrays.equals(source, starts[block], ends[block], content, at, at + length);
    }

    /** @return {@link CertificatesLoader#blockKey} of one of this index's blocks */
    long key(int block) {
        return CertificatesLoader.blockKey(source, starts[block], ends[block]);
    }
}
