package io.pintle.server.tls;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Refuses a server private key that every user of the machine can read: whoever reads it can impersonate this
 * policy server to every agent that pins its key. Rudder's own keys are 0600 or 0640.
 */
public final class KeyFilePermissions {
    private KeyFilePermissions() {}

    /**
     * @param key the private key file
     * @param allowWorldReadable {@code [tls] allow_world_readable_key}: skip the check
     * @throws IOException naming the file, its mode and the fix, when others may read it
     */
    public static void check(Path key, boolean allowWorldReadable) throws IOException {
        if (allowWorldReadable) {
            return;
        }
        Set<PosixFilePermission> permissions;
        try {
            permissions = Files.getPosixFilePermissions(key);
        } catch (UnsupportedOperationException notPosix) {
            return;
        }
        if (permissions.contains(PosixFilePermission.OTHERS_READ)) {
            throw new IOException(key + ": the private key is readable by every user ("
                    + PosixFilePermissions.toString(permissions) + "); restrict it (chmod o-rwx " + key
                    + ") or set [tls] allow_world_readable_key = true");
        }
    }
}
