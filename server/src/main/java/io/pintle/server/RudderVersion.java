package io.pintle.server;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Rudder version installed on this machine, as Rudder's packages record it: {@code
 * /opt/rudder/share/versions/rudder-server-version} on a root (rudder-packages' {@code rudder-server.spec}) and
 * {@code rudder-agent-version} on every machine with an agent, a relay included (the relay package requires the
 * agent of its own version). Both are {@code key=value} lines; Rudder's own tools read {@code rudder_version=}
 * (rudder-agent's {@code share/commands/agent-version}, rudder-package's {@code versions.rs}), and so does this.
 *
 * @param full the version as Rudder writes it ({@code 8.3.2}, {@code 9.0.0~rc1})
 * @param major its {@code X.Y}
 */
public record RudderVersion(String full, String major) {
    /** Far more than the dozen short lines Rudder writes; a larger file is not one of them. */
    static final int MAX_FILE_BYTES = 64 * 1024;

    private static final Pattern LINE = Pattern.compile("^rudder_version=(.*)$", Pattern.MULTILINE);
    private static final Pattern VERSION = Pattern.compile("^(\\d+\\.\\d+)(?:[.~+-][0-9A-Za-z.~+-]*)?$");

    /**
     * @param files version files, tried in order
     * @return the version of the first one that holds one, or empty when none does (absent, unreadable, no
     *     {@code rudder_version=} line, or one that is not {@code X.Y...})
     */
    public static Optional<RudderVersion> read(List<Path> files) {
        for (Path file : files) {
            Optional<RudderVersion> version = read(file);
            if (version.isPresent()) {
                return version;
            }
        }
        return Optional.empty();
    }

    private static Optional<RudderVersion> read(Path file) {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_FILE_BYTES + 1);
        } catch (IOException e) {
            return Optional.empty();
        }
        if (bytes.length > MAX_FILE_BYTES) {
            return Optional.empty();
        }
        return parse(new String(bytes, StandardCharsets.UTF_8));
    }

    /**
     * @param content a version file's text
     * @return its {@code rudder_version}, or empty when it has none that reads as a version
     */
    static Optional<RudderVersion> parse(String content) {
        Matcher line = LINE.matcher(content);
        if (!line.find()) {
            return Optional.empty();
        }
        String full = line.group(1).strip();
        Matcher version = VERSION.matcher(full);
        return version.matches() ? Optional.of(new RudderVersion(full, version.group(1))) : Optional.empty();
    }
}
