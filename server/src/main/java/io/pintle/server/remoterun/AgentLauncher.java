package io.pintle.server.remoterun;

import io.pintle.api.dto.RemoteRunEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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

    private static final Logger LOG = LoggerFactory.getLogger(AgentLauncher.class);

    private final ScheduledExecutorService timers;

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
            pump(node, process.getInputStream(), sink);
            int exit = process.waitFor();
            stop.cancel(false);
            long duration = millisSince(start);
            if (timedOut.get()) {
                sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.TIMEOUT, null, duration, true,
                        "the agent was stopped after " + timeout.toSeconds() + " s"));
            } else if (exit == 0) {
                sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.SUCCESS, 0, duration, false, null));
            } else {
                sink.accept(RemoteRunEvent.status(node, RemoteRunEvent.FAILED, exit, duration, false,
                        "the agent exited with code " + exit));
            }
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

    /** Stops the agent and what it started: SIGTERM to all (children first known, as they lose their parent), then SIGKILL. */
    private void stop(Process process) {
        List<ProcessHandle> tree = process.descendants().toList();
        tree.forEach(ProcessHandle::destroy);
        process.destroy();
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
    private static void pump(String node, InputStream in, RunSink sink) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        byte[] buffer = new byte[8192];
        int n;
        while ((n = in.read(buffer)) > 0) {
            for (int i = 0; i < n; i++) {
                byte b = buffer[i];
                if (b == '\n' || line.size() >= MAX_LINE_BYTES) {
                    emit(node, line, sink);
                    if (b == '\n') {
                        continue;
                    }
                }
                line.write(b);
            }
        }
        if (line.size() > 0) {
            emit(node, line, sink);
        }
    }

    private static void emit(String node, ByteArrayOutputStream line, RunSink sink) {
        int length = line.size();
        byte[] bytes = line.toByteArray();
        if (length > 0 && bytes[length - 1] == '\r') {
            length--;
        }
        sink.accept(RemoteRunEvent.output(node, new String(bytes, 0, length, StandardCharsets.UTF_8)));
        line.reset();
    }

    private static long millisSince(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
}
