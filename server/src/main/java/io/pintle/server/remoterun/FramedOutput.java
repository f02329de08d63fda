package io.pintle.server.remoterun;

import java.util.function.Consumer;

/**
 * An agent's output framed as the agent helper and the pull channel's nodes send it: the agent's lines, then an
 * empty line and {@code <nonce> exit <code>}. Lines are handed on as they come, except an empty line that turns
 * out to be the one before the status line, and the status line itself; anything after it is ignored. The nonce
 * (new for each run, unknown to the agent) keeps the agent's own output from ever passing for the status line.
 */
final class FramedOutput implements Consumer<String> {
    private final String statusPrefix;
    private final Consumer<String> lines;
    private boolean heldEmptyLine;
    private Integer exit;
    private String lastLine;

    /**
     * @param nonce this run's nonce
     * @param lines receives the agent's lines
     */
    FramedOutput(String nonce, Consumer<String> lines) {
        this.statusPrefix = nonce + " exit ";
        this.lines = lines;
    }

    @Override
    public void accept(String line) {
        if (exit != null) {
            return;
        }
        if (line.startsWith(statusPrefix) && line.length() > statusPrefix.length()
                && line.length() <= statusPrefix.length() + 3
                && line.substring(statusPrefix.length()).chars().allMatch(c -> c >= '0' && c <= '9')) {
            exit = Integer.parseInt(line.substring(statusPrefix.length()));
            return;
        }
        if (heldEmptyLine) {
            lines.accept("");
            heldEmptyLine = false;
        }
        if (line.isEmpty()) {
            heldEmptyLine = true;
            return;
        }
        lastLine = line;
        lines.accept(line);
    }

    /** @return the exit code of the status line, or null when none came (yet) */
    Integer exit() {
        return exit;
    }

    /** @return the last non-empty line handed on, or null */
    String lastLine() {
        return lastLine;
    }
}
