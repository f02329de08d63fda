package io.pintle.server.remoterun;

import io.pintle.api.dto.RemoteRunEvent;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs this machine's agent for one remote run: {@code ProcessBuilder(List)} on the configured argv (no shell, no
 * argument from the request but validated conditions), standard input closed, standard error merged into the
 * output, every line handed on as it comes, and the process (with whatever it started) stopped at the timeout.
 */
public final class AgentLauncher {
    /** A longer line is split: an agent's lines are short, and a line must not grow without bound. */
    public static final int MAX_LINE_BYTES = 64 * 1024;
    /** After the timeout's polite stop, how long the agent gets before it is killed. */
    public static final Duration KILL_GRACE = Duration.ofSeconds(5);

    /**
     * Calls to the agent helper open at once; more wait their turn here (systemd would close a connection past
     * pintle-agent.socket's {@code MaxConnections=16}).
     */
    public static final int HELPER_SLOTS = 4;

    /** The first word of a request to the agent helper. */
    public static final String HELPER_PROTOCOL = "pintle-agent/1";
    /** How the agent helper's refusals begin. */
    public static final String HELPER_REFUSED = "pintle-agent: refused: ";
    /** {@code timeout}'s exit code when it stopped the agent with TERM, and with KILL. */
    static final int TIMEOUT_EXIT = 124;
    static final int KILLED_EXIT = 137;

    private static final Logger LOG = LoggerFactory.getLogger(AgentLauncher.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ScheduledExecutorService timers;
    private final Semaphore helperSlots = new Semaphore(HELPER_SLOTS, true);

    /** @param timers runs the timeouts */
    public AgentLauncher(ScheduledExecutorService timers) {
        this.timers = timers;
    }

    /**
     * Runs the agent and waits for it.
     *
     * @param node this server's node id, for the events
     * @param argv the exact argv
     * @param timeout when to stop it
     * @param sink receives each output line, then the status
     */
    public void run(String node, List<String> argv, Duration timeout, RunSink sink) {
        long start = System.nanoTime();
        Process process;
        try {
            ProcessBuilder builder = new ProcessBuilder(argv).redirectErrorStream(true);
            process = builder.start();
        } catch (IOException | RuntimeException e) {
            LOG.warn("remote run: cannot start the agent {}: {}", argv.get(0), e.getMessage());
            sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.ERROR, null, millisSince(start), false,
                    "cannot start the agent: " + e.getMessage()));
            return;
        }
        LOG.info("remote run: started {} (pid {})", argv, process.pid());
        AtomicBoolean timedOut = new AtomicBoolean();
        ScheduledFuture<?> stop;
        try {
            stop = timers.schedule(() -> {
                timedOut.set(true);
                LOG.warn("remote run: the agent (pid {}) is still running after {} s; stopping it", process.pid(),
                        timeout.toSeconds());
                stop(process);
            }, timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            stop(process);
            sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.ERROR, null, millisSince(start), false,
                    "the server is stopping"));
            return;
        }
        try {
            process.getOutputStream().close();
            pump(process.getInputStream(), line -> sink.accept(RemoteRunEvent.output(node, line)));
            int exit = process.waitFor();
            stop.cancel(false);
            long duration = millisSince(start);
            sink.accept(ended(node, exit, timedOut.get(), duration, timeout));
            LOG.info("remote run: the agent (pid {}) ended: exit {}{}, {} ms", process.pid(), exit,
                    timedOut.get() ? " (timed out)" : "", duration);
        } catch (IOException e) {
            stop.cancel(false);
            stop(process);
            if (timedOut.get()) {
                // Stopping the agent can close its output under the reader ("Stream closed"): still a timeout.
                sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.TIMEOUT, null, millisSince(start), true,
                        "the agent was stopped after " + timeout.toSeconds() + " s"));
                return;
            }
            sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.ERROR, null, millisSince(start), false,
                    "reading the agent's output failed: " + e.getMessage()));
        } catch (InterruptedException e) {
            stop.cancel(false);
            stop(process);
            Thread.currentThread().interrupt();
            sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.ERROR, null, millisSince(start), false,
                    "the server is stopping"));
        }
    }

    /**
     * Asks the agent helper behind a Unix socket (pintle-agent.socket) to run the agent, and waits for it. The
     * helper ({@code deploy/lib/pintle-agent-run}, run as root by systemd for each connection) reads one line,
     * {@code pintle-agent/1 <nonce> <timeout> <command> [<conditions>]}, answers with the agent's output, then an
     * empty line and {@code <nonce> exit <code>}; a refused request gets {@code pintle-agent: refused: <reason>}.
     * The nonce, new for each run, keeps the agent's own output from ever passing for the status line.
     *
     * @param node this server's node id, for the events
     * @param socket the helper's socket
     * @param order what to run
     * @param timeout when the helper stops the agent (Pintle gives up {@link #KILL_GRACE} twice later)
     * @param sink receives each output line, then the status
     */
    public void run(String node, Path socket, RunOrder order, Duration timeout, RunSink sink) {
        askHelper(node, socket, order.command().wire()
                + (order.conditions().isEmpty() ? "" : " " + order.conditions().joined()), order.command(), timeout,
                sink);
    }

    /**
     * Asks the agent helper to run {@code rudder remote run [-D <conditions>] -- <hosts>} (its {@code remote}
     * command: relayd's way to run the agents of nodes that are not Pintle servers, through their cf-serverd), and
     * waits for it. Same protocol, framing, timeout and statuses as {@link #run(String, Path, RunOrder, Duration,
     * RunSink)}: the events all name {@code node}, and the status is the whole invocation's.
     *
     * @param node what the events name (the caller attributes the lines to the nodes)
     * @param socket the helper's socket
     * @param hosts the host names or addresses, each {@code [A-Za-z0-9][A-Za-z0-9.:_-]*}, at most 1000 and 65536
     *     characters with their commas (the helper refuses anything else)
     * @param conditions the conditions
     * @param timeout when the helper stops {@code rudder remote run} (Pintle gives up {@link #KILL_GRACE} twice later)
     * @param sink receives each output line, then the status
     */
    public void runRemote(String node, Path socket, List<String> hosts, Conditions conditions, Duration timeout,
            RunSink sink) {
        askHelper(node, socket, "remote " + String.join(",", hosts)
                + (conditions.isEmpty() ? "" : " " + conditions.joined()), "remote run of " + hosts.size()
                + " host(s)", timeout, sink);
    }

    private void askHelper(String node, Path socket, String command, Object what, Duration timeout, RunSink sink) {
        try {
            helperSlots.acquire();
        } catch (InterruptedException stopping) {
            Thread.currentThread().interrupt();
            sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.ERROR, null, 0, false, "the server is stopping"));
            return;
        }
        try {
            callHelper(node, socket, command, what, timeout, sink);
        } finally {
            helperSlots.release();
        }
    }

    private void callHelper(String node, Path socket, String command, Object what, Duration timeout, RunSink sink) {
        long start = System.nanoTime();
        String nonce = HexFormat.of().formatHex(randomBytes(16));
        String request = HELPER_PROTOCOL + " " + nonce + " " + Math.max(1, timeout.toSeconds()) + " " + command
                + "\n";
        SocketChannel channel;
        try {
            channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        } catch (IOException | UnsupportedOperationException e) {
            sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.ERROR, null, millisSince(start), false,
                    "cannot open a Unix socket: " + e.getMessage()));
            return;
        }
        AtomicBoolean timedOut = new AtomicBoolean();
        try (channel) {
            try {
                channel.connect(UnixDomainSocketAddress.of(socket));
            } catch (IOException e) {
                LOG.warn("remote run: cannot reach the agent helper at {}: {}", socket, e.toString());
                sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.ERROR, null, millisSince(start), false,
                        "cannot reach the agent helper at " + socket + " (" + reason(e) + "): start it with "
                                + "'systemctl enable --now pintle-agent.socket', or unset [remote_run] agent_socket"));
                return;
            }
            ScheduledFuture<?> giveUp;
            try {
                giveUp = timers.schedule(() -> {
                    timedOut.set(true);
                    LOG.warn("remote run: the agent helper at {} has not answered {} s after the agent's timeout; "
                            + "closing the connection", socket, 2 * KILL_GRACE.toSeconds());
                    closeQuietly(channel);
                }, timeout.plus(KILL_GRACE).plus(KILL_GRACE).toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopping) {
                sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.ERROR, null, millisSince(start), false,
                        "the server is stopping"));
                return;
            }
            try {
                channel.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII)));
                channel.shutdownOutput();
                LOG.info("remote run: asked the agent helper at {} for {}", socket, what);
                FramedOutput output = new FramedOutput(nonce, line -> sink.accept(RemoteRunEvent.output(node, line)));
                pump(Channels.newInputStream(channel), output);
                giveUp.cancel(false);
                long duration = millisSince(start);
                Integer exit = output.exit();
                if (exit == null) {
                    String refusal = output.lastLine() != null && output.lastLine().startsWith(HELPER_REFUSED)
                            ? ": " + output.lastLine().substring(HELPER_REFUSED.length()) : "";
                    sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.ERROR, null, duration, false,
                            "the agent helper ended without an exit status" + refusal));
                } else {
                    boolean stopped = (exit == TIMEOUT_EXIT || exit == KILLED_EXIT) && duration >= timeout.toMillis();
                    sink.accept(ended(node, exit, stopped, duration, timeout));
                }
                LOG.info("remote run: the agent helper at {} answered: exit {}, {} ms", socket, exit, duration);
            } catch (IOException e) {
                giveUp.cancel(false);
                if (timedOut.get()) {
                    sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.TIMEOUT, null, millisSince(start), true,
                            "the agent helper did not answer within " + timeout.toSeconds() + " s and "
                                    + 2 * KILL_GRACE.toSeconds() + " s more"));
                    return;
                }
                sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.ERROR, null, millisSince(start), false,
                        "reading the agent helper's answer failed: " + reason(e)));
            }
        } catch (IOException closing) {
            LOG.debug("remote run: closing the agent helper's connection: {}", closing.toString());
        }
    }

    private static byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    private static String reason(IOException e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            LOG.debug("remote run: closing the agent helper's connection: {}", e.toString());
        }
    }

    /**
     * Stops the agent and what it started: SIGTERM to all, then SIGKILL. The tree is listed first (its members lose
     * their parent), and the agent is stopped before its children: a shell whose child died first would run its
     * next command before its own SIGTERM arrived.
     */
    private void stop(Process process) {
        List<ProcessHandle> tree = process.descendants().toList();
        process.destroy();
        tree.forEach(ProcessHandle::destroy);
        Runnable kill = () -> {
            tree.forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        };
        try {
            timers.schedule(kill, KILL_GRACE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            // The server is stopping: no grace period.
            kill.run();
        }
    }

    /** Hands on each line (without its end of line) until the end of the output; a last unterminated line too. */
    private static void pump(InputStream in, Consumer<String> lines) throws IOException {
        LineSplitter splitter = new LineSplitter(lines);
        byte[] buffer = new byte[8192];
        int n;
        while ((n = in.read(buffer)) > 0) {
            splitter.feed(ByteBuffer.wrap(buffer, 0, n));
        }
        splitter.finish();
    }

    /** @return the status of an agent that ended: stopped at its timeout, succeeded, or failed with its code */
    private static RemoteRunEvent ended(String node, int exit, boolean timedOut, long duration, Duration timeout) {
        if (timedOut) {
            return RemoteRunEvent.status(node, RemoteRunEvent.TIMEOUT, null, duration, true,
                    "the agent was stopped after " + timeout.toSeconds() + " s");
        }
        if (exit == 0) {
            return RemoteRunEvent.status(node, RemoteRunEvent.SUCCESS, 0, duration, false, null);
        }
        return RemoteRunEvent.status(node, RemoteRunEvent.FAILED, exit, duration, false,
                "the agent exited with code " + exit);
    }

    private static long millisSince(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
}
