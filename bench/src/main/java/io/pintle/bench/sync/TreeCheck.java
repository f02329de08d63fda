package io.pintle.bench.sync;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Checks a synced directory against the source tree: the same relative paths of files (symbolic links to files
 * count as files, whichever way a contestant copied them), the same SHA-256 of every one, nothing extra.
 * Directories are not compared.
 */
final class TreeCheck {
    private static final int MAX_REPORTED = 5;

    private TreeCheck() {}

    /**
     * @param tree a directory
     * @return relative path to SHA-256 of the content, for every file and link to a file
     * @throws IOException on read errors
     */
    static Map<String, String> digests(Path tree) throws IOException {
        Map<String, String> digests = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(tree)) {
            for (Path path : walk.filter(Files::isRegularFile).toList()) {
                digests.put(tree.relativize(path).toString().replace('\\', '/'), sha256(path));
            }
        }
        return digests;
    }

    /**
     * @param expected the source's {@link #digests}
     * @param synced the synced directory
     * @return the differences, at most a few, empty when equal
     * @throws IOException on read errors
     */
    static List<String> differences(Map<String, String> expected, Path synced) throws IOException {
        Map<String, String> actual = digests(synced);
        Set<String> paths = new TreeSet<>(expected.keySet());
        paths.addAll(actual.keySet());
        List<String> differences = new ArrayList<>();
        for (String path : paths) {
            if (!Objects.equals(expected.get(path), actual.get(path))) {
                differences.add(path + (actual.get(path) == null ? " missing"
                        : expected.get(path) == null ? " extra" : " differs"));
                if (differences.size() == MAX_REPORTED) {
                    break;
                }
            }
        }
        return differences;
    }

    private static String sha256(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[64 * 1024];
            int n;
            while ((n = in.read(buffer)) > 0) {
                digest.update(buffer, 0, n);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
