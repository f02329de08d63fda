package io.pintle.client;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Puts a staged tree in place of the synced directory.
 *
 * <p>On Linux this is one {@code renameat2(RENAME_EXCHANGE)} call (reached through JNA; the JDK has no binding for
 * it): the two directories trade names atomically, so a reader of the synced path sees the old tree or the new
 * one, never a mix and never nothing. Where that call is unavailable (another OS, a libc or kernel without it, a
 * file system refusing the flag, JNA unable to load) the fallback is two renames: the synced directory to
 * {@code .<name>.pintle-old-<random>}, then the staged tree to the synced path. Each rename is atomic but between
 * the two the synced path does not exist for a moment; if the second fails the first is undone, and a crash
 * between them is repaired by the next sync (see {@link DirectorySync}). When the synced directory does not exist
 * yet, a plain rename puts the staged tree there.
 */
final class TreeSwap {
    private static final int AT_FDCWD = -100;
    private static final int RENAME_EXCHANGE = 2;
    private static final int EINVAL = 22;
    private static final int ENOSYS = 38;
    private static final int EOPNOTSUPP = 95;

    /** The libc call used, as glibc (2.28+) declares it. */
    interface LibC extends Library {
        int renameat2(int oldDirectory, byte[] oldPath, int newDirectory, byte[] newPath, int flags)
                throws LastErrorException;
    }

    private final boolean tryExchange;
    private final AtomicBoolean exchangeUnavailable = new AtomicBoolean();
    private volatile LibC libc;

    private TreeSwap(boolean tryExchange) {
        this.tryExchange = tryExchange;
    }

    /** @return a swap by atomic exchange where the platform has it, two renames otherwise */
    static TreeSwap atomic() {
        return new TreeSwap(Platform.isLinux());
    }

    /** @return a swap by two renames always (the fallback; for tests of it) */
    static TreeSwap renameAside() {
        return new TreeSwap(false);
    }

    /** @return whether the last swap could use the atomic exchange, as far as is known yet */
    boolean exchangeAvailable() {
        return tryExchange && !exchangeUnavailable.get();
    }

    /**
     * @param staging the complete new tree, in the same directory as {@code target}
     * @param target the synced directory, which may not exist
     * @param random for the name of the swapped-out tree
     * @return where the previous tree now is (the caller deletes it), or null when there was none
     * @throws IOException when the swap fails; {@code target} is then as it was
     */
    Path swap(Path staging, Path target, SecureRandom random) throws IOException {
        if (!Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
            move(staging, target);
            return null;
        }
        if (exchange(staging, target)) {
            return staging;
        }
        Path old = SyncNames.unique(target, SyncNames.OLD, random);
        move(target, old);
        try {
            move(staging, target);
        } catch (IOException e) {
            try {
                move(old, target);
            } catch (IOException undo) {
                e.addSuppressed(undo);
            }
            throw e;
        }
        return old;
    }

    /** @return whether the two were exchanged; false when the exchange is unavailable here */
    private boolean exchange(Path staging, Path target) throws IOException {
        LibC c = libc();
        if (c == null) {
            return false;
        }
        try {
            c.renameat2(AT_FDCWD, nativePath(staging), AT_FDCWD, nativePath(target), RENAME_EXCHANGE);
            return true;
        } catch (LastErrorException e) {
            int errno = e.getErrorCode();
            if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {
                exchangeUnavailable.set(true);
                return false;
            }
            throw new IOException("cannot exchange " + staging + " and " + target + ": renameat2 failed, errno "
                    + errno, e);
        } catch (UnsatisfiedLinkError e) {
            exchangeUnavailable.set(true); // a libc older than 2.28
            return false;
        }
    }

    private LibC libc() {
        if (!tryExchange || exchangeUnavailable.get()) {
            return null;
        }
        LibC c = libc;
        if (c == null) {
            try {
                c = Native.load("c", LibC.class);
                libc = c;
            } catch (LinkageError | RuntimeException e) {
                exchangeUnavailable.set(true);
                return null;
            }
        }
        return c;
    }

    /** A NUL-terminated path in the encoding the JDK itself uses for file names. */
    private static byte[] nativePath(Path path) {
        String encoding = System.getProperty("sun.jnu.encoding");
        Charset charset = encoding != null && Charset.isSupported(encoding) ? Charset.forName(encoding)
                : Charset.defaultCharset();
        byte[] bytes = path.toAbsolutePath().toString().getBytes(charset);
        byte[] terminated = new byte[bytes.length + 1];
        System.arraycopy(bytes, 0, terminated, 0, bytes.length);
        return terminated;
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("cannot rename " + from + " to " + to + " atomically", e);
        }
    }
}
