package io.pintle.bench.harness;

import java.io.IOException;

/**
 * Edits of {@code pintle demo}'s configuration text that the harnesses make before starting the server. Each edit
 * replaces text the demo writes exactly once, and fails when the demo no longer writes it so, rather than leave
 * a configuration the harness did not mean.
 */
public final class DemoConfig {
    private DemoConfig() {}

    /**
     * The demo's admin listener is on port 0 (any); a harness that reads {@code /metrics} there needs to know it.
     *
     * @param config the demo's configuration
     * @param adminPort the port, on 127.0.0.1
     * @return the configuration with the admin listener on that port
     * @throws IOException when the demo's admin listener is not written as expected
     */
    public static String withAdminPort(String config, int adminPort) throws IOException {
        return replaceOnce(config, "[admin]\nlisten = \"127.0.0.1:0\"",
                "[admin]\nlisten = \"127.0.0.1:" + adminPort + "\"");
    }

    /**
     * @param text the configuration
     * @param old text it must hold exactly once
     * @param replacement what replaces it
     * @return the configuration with it replaced
     * @throws IOException naming the text when it is missing or there more than once
     */
    public static String replaceOnce(String text, String old, String replacement) throws IOException {
        int at = text.indexOf(old);
        if (at < 0 || text.indexOf(old, at + 1) >= 0) {
            throw new IOException("the demo configuration does not have exactly one '" + old.replace("\n", "\\n")
                    + "'");
        }
        return text.substring(0, at) + replacement + text.substring(at + old.length());
    }
}
