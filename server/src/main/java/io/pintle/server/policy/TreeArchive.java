package io.pintle.server.policy;

import io.pintle.api.dto.Manifest;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * Writes one {@link TreeVersion} as a {@code tar.gz} stream as its tree is walked again ({@link
 * TreeScanner#replay}), with bounded memory whatever the tree's size. Every file is checked to be exactly the
 * version its manifest entry describes: the stat after opening it must match, and the SHA-256 of the bytes sent
 * must equal the manifest's; and the entries written must be the scanned version's (their ETag). If anything
 * differs the write fails with {@link FileVersion.FileChangedException} part-way, before the archive's end, so a
 * reader sees a broken stream, never an archive that mixes two versions of the tree.
 *
 * <p>Entries: directories (with a trailing {@code /}), files and symbolic links, in manifest order, with their
 * permission bits and modification times (whole seconds); owner and group 0 with no names, as Rudder's own
 * archives.
 *
 * <p>A file that is already compressed (it starts as a bzip2, gzip, xz, zstd, lz4 or zip file does: a node's
 * {@code rudder.tar.bz2}) is stored in the gzip stream without compression: deflating 40 KiB that do not
 * compress cost the root about 1 ms per node and relay (bench/relaysync), storing them a tenth of that.
 */
public final class TreeArchive {
    private static final int BUFFER_BYTES = 64 * 1024;

    /**
     * Favour speed: policy text compresses about as well at level 1, and an archive is built per request.
     */
    static final int COMPRESSION_LEVEL = Deflater.BEST_SPEED;

    private TreeArchive() {}

    /**
     * @param scanner walks the tree again
     * @param tree the version to write
     * @param output where the {@code tar.gz} goes; finished (gzip trailer written) but not closed
     * @throws FileVersion.FileChangedException if a file, or the tree, is no longer the version scanned
     * @throws IOException if a file cannot be read or the output fails
     */
    public static void write(TreeScanner scanner, TreeVersion tree, OutputStream output) throws IOException {
        Writer writer = new Writer(output);
        writer.add(scanner, tree, "");
        writer.finish();
    }

    /**
     * An archive of several trees, one after the other ({@code ?view=archive&only=}): each tree's entries under
     * its own prefix, each tree checked on its own to be the version scanned. A failure part-way leaves the
     * archive unfinished (no gzip trailer); the trees written whole before it are whole in the stream.
     */
    public static final class Writer {
        private final TarArchiveOutputStream tar;
        private final LeveledGzip gzip;
        private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES);

        /**
         * @param output where the {@code tar.gz} goes; finished by {@link #finish} (gzip trailer written) but not
         *     closed
         */
        public Writer(OutputStream output) throws IOException {
            gzip = new LeveledGzip(new BufferedOutputStream(new NonClosing(output), BUFFER_BYTES));
            // Not try-with-resources: after a failure, closing would write the gzip trailer and make the broken
            // stream look complete. Only a finished archive is closed (which writes the trailer).
            tar = new TarArchiveOutputStream(gzip, "UTF-8");
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
            tar.setAddPaxHeadersForNonAsciiNames(true);
        }

        /**
         * Writes one tree's entries (not the tree's own directory).
         *
         * @param scanner walks the tree again
         * @param tree the version to write
         * @param prefix put before each entry's path: empty, or a name followed by {@code /}
         * @throws FileVersion.FileChangedException if a file, or the tree, is no longer the version scanned
         * @throws IOException if a file cannot be read or the output fails
         */
        public void add(TreeScanner scanner, TreeVersion tree, String prefix) throws IOException {
            scanner.replay(tree, (entry, stat) -> {
                String path = prefix + entry.path();
                TarArchiveEntry header;
                if (entry.isDirectory()) {
                    header = new TarArchiveEntry(path + "/", TarConstants.LF_DIR);
                } else if (entry.isSymlink()) {
                    header = new TarArchiveEntry(path, TarConstants.LF_SYMLINK);
                    header.setLinkName(entry.target());
                } else {
                    header = new TarArchiveEntry(path, TarConstants.LF_NORMAL);
                    header.setSize(entry.size());
                }
                header.setMode(entry.isSymlink() ? 0777 : stat.mode());
                // Whole seconds: what a ustar header holds. A fraction would add a PAX header (two 512-byte
                // records) to every entry, for the server to build and compress and the client to parse: a
                // Rudder node's archive had 50 of them. The manifest has the exact time.
                header.setModTime(FileTime.from(stat.modified().getEpochSecond(), TimeUnit.SECONDS));
                header.setIds(0, 0);
                header.setUserName("");
                header.setGroupName("");
                tar.putArchiveEntry(header);
                if (entry.isFile()) {
                    copy(entry, stat, tar, gzip, buffer);
                }
                tar.closeArchiveEntry();
            });
        }

        /** Ends the archive (tar end blocks, gzip trailer); the output stays open. */
        public void finish() throws IOException {
            tar.finish();
            tar.close();
        }
    }

    private static void copy(Manifest.Entry entry, FileStat expected, OutputStream tar, LeveledGzip gzip,
            ByteBuffer buffer) throws IOException {
        MessageDigest sha256 = DigestCache.sha256();
        boolean stored = false;
        try (FileChannel channel = open(expected)) {
            long remaining = expected.size();
            while (remaining > 0) {
                buffer.clear();
                if (remaining < buffer.capacity()) {
                    buffer.limit((int) remaining);
                }
                int read = channel.read(buffer);
                if (read < 0) {
                    throw new FileVersion.FileChangedException(expected.path() + " shrank while it was archived");
                }
                if (STORE_COMPRESSED && remaining == expected.size() && expected.size() >= MIN_STORED_BYTES
                        && compressed(buffer.array(), read)) {
                    // The tar stream hands the gzip stream each 512-byte record as soon as it is full: the header
                    // before this is deflated at the usual level, this file's bytes from here on are stored.
                    gzip.level(Deflater.NO_COMPRESSION);
                    stored = true;
                }
                sha256.update(buffer.array(), 0, read);
                tar.write(buffer.array(), 0, read);
                remaining -= read;
            }
        } finally {
            if (stored) {
                gzip.level(COMPRESSION_LEVEL);
            }
        }
        String sent = HexFormat.of().formatHex(sha256.digest());
        if (!sent.equals(entry.sha256())) {
            throw new FileVersion.FileChangedException(expected.path() + " changed while it was archived");
        }
    }

    /** Smaller files are deflated whatever they hold: switching the level costs a deflate block of its own. */
    static final int MIN_STORED_BYTES = 1024;

    /** Bench-only switch ({@code -Dpintle.bench.storeCompressed=false}): every file deflated, as before. */
    private static final boolean STORE_COMPRESSED = !"false".equals(System.getProperty("pintle.bench.storeCompressed"));

    /**
     * @param head a file's first bytes
     * @param length how many of them were read
     * @return whether they start as a compressed file's: bzip2 ({@code BZh1}-{@code 9}), gzip, xz, zstd, lz4
     *     frame, zip (a local file header)
     */
    static boolean compressed(byte[] head, int length) {
        return starts(head, length, 'B', 'Z', 'h') && length > 3 && head[3] >= '1' && head[3] <= '9'
                || starts(head, length, 0x1f, 0x8b)
                || starts(head, length, 0xfd, '7', 'z', 'X', 'Z', 0x00)
                || starts(head, length, 0x28, 0xb5, 0x2f, 0xfd)
                || starts(head, length, 0x04, 0x22, 0x4d, 0x18)
                || starts(head, length, 'P', 'K', 0x03, 0x04);
    }

    private static boolean starts(byte[] head, int length, int... magic) {
        if (length < magic.length) {
            return false;
        }
        for (int i = 0; i < magic.length; i++) {
            if ((head[i] & 0xff) != magic[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * The JDK's gzip stream at {@link #COMPRESSION_LEVEL}, whose level can change between entries: the data
     * written before a change is deflated at the old level, what follows at the new one, in one valid stream.
     */
    private static final class LeveledGzip extends GZIPOutputStream {
        private int level = COMPRESSION_LEVEL;

        LeveledGzip(OutputStream out) throws IOException {
            super(out, BUFFER_BYTES);
            def.setLevel(COMPRESSION_LEVEL);
        }

        void level(int next) {
            if (next != level) {
                def.setLevel(next);
                level = next;
            }
        }
    }

    private static FileChannel open(FileStat expected) throws IOException {
        FileChannel channel;
        try {
            channel = FileVersion.openNoFollow(expected.path());
        } catch (NoSuchFileException gone) {
            throw new FileVersion.FileChangedException(expected.path() + " was removed while the tree was archived");
        }
        boolean ok = false;
        try {
            FileStat now = FileStat.of(expected.path());
            if (!now.equals(expected)) {
                throw new FileVersion.FileChangedException(expected.path() + " changed since the manifest was made");
            }
            ok = true;
            return channel;
        } finally {
            if (!ok) {
                channel.close();
            }
        }
    }

    /**
     * Lets the gzip stream finish without closing the response stream under it. (The buffer in front of it
     * turns the deflater's 512-byte writes into 64 KiB ones: an HTTP/2 frame per 512 bytes was 10 times slower.)
     */
    private static final class NonClosing extends java.io.FilterOutputStream {
        NonClosing(OutputStream out) {
            super(out);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            out.write(bytes, offset, length);
        }

        @Override
        public void close() throws IOException {
            flush();
        }
    }
}
