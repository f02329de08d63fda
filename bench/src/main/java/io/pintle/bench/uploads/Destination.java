package io.pintle.bench.uploads;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * What a cell left where the server stores reports: every expected file under its final name and byte-identical to
 * what was sent, nothing else, and no temporary file left (Pintle's are hidden files beside the reports; nginx's
 * are in its {@code client_body_temp_path}). Every expected file is compared, not a sample: 1,000 files of 5 KB
 * take a few milliseconds.
 *
 * @param expected files that should be there
 * @param complete of those, present and byte-identical
 * @param differing present with other bytes
 * @param missing absent
 * @param unexpected other visible files
 * @param leftovers temporary files still there
 */
record Destination(int expected, int complete, int differing, int missing, int unexpected, int leftovers) {
    boolean clean() {
        return complete == expected && differing == 0 && missing == 0 && unexpected == 0 && leftovers == 0;
    }

    /** @return e.g. {@code 1,000 of 1,000} or {@code 998 of 1,000 (2 missing)} */
    String summary() {
        StringBuilder out = new StringBuilder(String.format(java.util.Locale.ROOT, "%,d of %,d", complete, expected));
        List<String> problems = new ArrayList<>();
        if (differing > 0) {
            problems.add(differing + " differing");
        }
        if (missing > 0) {
            problems.add(missing + " missing");
        }
        if (unexpected > 0) {
            problems.add(unexpected + " unexpected");
        }
        if (leftovers > 0) {
            problems.add(leftovers + " temporary left");
        }
        if (!problems.isEmpty()) {
            out.append(" (").append(String.join(", ", problems)).append(')');
        }
        return out.toString();
    }

    /**
     * Checks the destination, then empties it (and the temporary directory) for the next cell.
     *
     * @param target the server
     * @param layout where the sent reports are
     * @param names the names that should have arrived
     */
    static Destination checkAndClear(UploadTarget target, UploadLayout layout, List<String> names) throws IOException {
        int complete = 0;
        int differing = 0;
        int missing = 0;
        for (String name : names) {
            Path file = target.reports().resolve(name);
            if (!Files.isRegularFile(file)) {
                missing++;
            } else if (Files.mismatch(layout.reports().resolve(name), file) == -1) {
                complete++;
            } else {
                differing++;
            }
        }
        java.util.Set<String> expected = java.util.Set.copyOf(names);
        int unexpected = 0;
        int leftovers = 0;
        List<Path> clear = new ArrayList<>();
        try (Stream<Path> entries = Files.list(target.reports())) {
            for (Path entry : entries.toList()) {
                String name = entry.getFileName().toString();
                if (name.startsWith(".")) {
                    leftovers++;
                } else if (!expected.contains(name)) {
                    unexpected++;
                }
                clear.add(entry);
            }
        }
        if (target.bodyTemp() != null && Files.isDirectory(target.bodyTemp())) {
            try (Stream<Path> entries = Files.walk(target.bodyTemp())) {
                for (Path entry : entries.filter(Files::isRegularFile).toList()) {
                    leftovers++;
                    clear.add(entry);
                }
            }
        }
        for (Path entry : clear) {
            Files.deleteIfExists(entry);
        }
        return new Destination(names.size(), complete, differing, missing, unexpected, leftovers);
    }
}
