package io.pintle.server;

/** The version of this build, from the jar manifest. */
public final class PintleVersion {
    private PintleVersion() {}

    /** @return the version, or {@code development} when not running from a packaged jar */
    public static String current() {
        String version = PintleVersion.class.getPackage().getImplementationVersion();
        return version != null ? version : "development";
    }
}
