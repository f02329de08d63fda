package io.pintle.server.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pintle.client.ClientTls;
import io.pintle.server.testing.Await;
import io.pintle.server.testing.NodeKeys;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.ServerProcess;
import io.pintle.server.tls.SelfSigned;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Zero-downtime replacement of the server process under socket activation, for real: {@code systemd-socket-activate}
 * binds the port and hands it, as systemd's pintle.socket does, to a loop that starts the server through
 * {@code deploy/bin/pintle} again each time it exits (systemd's restart of pintle.service). A client downloads
 * continuously while the server process is sent SIGTERM and a new one takes over the same listening socket.
 *
 * <p>"Loses no request" here: every request opens a new TCP and TLS connection ({@code Connection: close}), so no
 * request can be sent on a kept-alive connection the old process is closing (a race HTTP leaves to clients'
 * retry of idempotent requests). Every request must then get a complete 200 with the right bytes: connections
 * made while no process accepts wait in the socket's backlog, never refused. Nothing is retried.
 */
class SocketActivationIT {
    private static final Path ACTIVATE = Path.of("/usr/bin/systemd-socket-activate");
    /** How long a server started by systemd-socket-activate may take to serve, on a loaded machine. */
    private static final Duration STARTS = Duration.ofSeconds(60);
    private static final String FILE = "/policies/node-a/rules/rudder.tar.bz2";
    private static final String BIG_FILE = "/policies/node-a/rules/big.bin";

    @Test
    void replacingTheServerProcessLosesNoRequest(@TempDir Path dir) throws Exception {
        assumeTrue(Files.isExecutable(ACTIVATE), "systemd-socket-activate is not installed (Debian package systemd): "
                + "socket activation is not tested here");
        Sandbox sandbox = Sandbox.create(dir);
        NodeKeys a = sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        byte[] small = sandbox.randomShareFile("node-a/rules/rudder.tar.bz2", 16 * 1024, 1);
        byte[] big = sandbox.randomShareFile("node-a/rules/big.bin", 8 * 1024 * 1024, 2);
        Path config = sandbox.config("[reload]\nwatch = false");
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        // systemd's part: pintle.socket holds the port while pintle.service restarts. Each start gets a new PID
        // and, as systemd sets it, LISTEN_PID naming that PID.
        Path loop = Files.writeString(dir.resolve("restart-loop.sh"), """
                dir=$1; shift
                while [ ! -e "$dir/stop" ]; do
                    sh -c 'LISTEN_PID=$$; export LISTEN_PID; exec "$@"' server "$@"
                    echo "restart-loop: server exited with $?"
                done
                """);
        Path log = dir.resolve("server.log");
        // systemd-socket-activate passes its children only the environment named by -E, as a unit does.
        Process holder = new ProcessBuilder(ACTIVATE.toString(), "-l", "127.0.0.1:" + port,
                "-E", "PATH=" + System.getenv("PATH"), "-E", "PINTLE_JAR=" + ServerProcess.jar(),
                "-E", "JAVA_HOME=" + javaHome(),
                "-E", "PINTLE_JAVA_OPTS=-XX:TieredStopAtLevel=1",
                "sh", loop.toString(), dir.toString(), wrapper(), "serve", "--config", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        SSLContext tls = ClientTls.context(a.certificatePath(), a.keyPath(), Set.of(sandbox.serverPin()));
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger ok = new AtomicInteger();
        List<String> failures = new CopyOnWriteArrayList<>();
        Thread client = new Thread(() -> {
            while (running.get()) {
                try {
                    byte[] body = get(tls, port, FILE, 0, () -> {});
                    if (Arrays.equals(body, small)) {
                        ok.incrementAndGet();
                    } else {
                        failures.add("wrong body of " + body.length + " bytes");
                    }
                } catch (IOException | RuntimeException e) {
                    failures.add(e.toString());
                }
            }
        }, "download-loop");
        try {
            Await.until(STARTS, serverLog(log), () -> read(log).contains("Listening on 127.0.0.1:" + port));
            client.start(); // its first connection makes systemd-socket-activate start the loop
            Map<Long, Boolean> servers = new ConcurrentHashMap<>();
            ProcessHandle first = awaitServer(holder, servers, log);
            awaitAtLeast(ok, 5, log);

            // A slow download in flight when SIGTERM arrives: the drain lets it finish.
            AtomicBoolean slowStarted = new AtomicBoolean();
            AtomicBoolean slowDone = new AtomicBoolean();
            long[] slowEnded = new long[1];
            List<String> slowFailures = new CopyOnWriteArrayList<>();
            Thread slow = new Thread(() -> {
                try {
                    byte[] body = get(tls, port, BIG_FILE, 20, () -> slowStarted.set(true));
                    slowEnded[0] = System.nanoTime();
                    slowDone.set(Arrays.equals(body, big));
                    if (!slowDone.get()) {
                        slowFailures.add("slow download: wrong body of " + body.length + " bytes");
                    }
                } catch (IOException | RuntimeException e) {
                    slowFailures.add("slow download: " + e);
                }
            }, "slow-download");
            slow.start();
            Await.until(STARTS, serverLog(log), slowStarted::get);
            int beforeStop = ok.get();
            long terminated = System.nanoTime();
            assertThat(first.destroy()).as("SIGTERM sent").isTrue(); // as systemctl restart pintle.service does
            ProcessHandle second = awaitServer(holder, servers, log);
            assertThat(second.pid()).isNotEqualTo(first.pid());
            assertThat(first.onExit().get(30, TimeUnit.SECONDS).isAlive()).isFalse();
            awaitAtLeast(ok, beforeStop + 5, log);
            slow.join(30_000);
            assertThat(slowFailures).isEmpty();
            assertThat(slowDone).as("the download in flight at SIGTERM completed").isTrue();
            assertThat(slowEnded[0]).as("it was still in flight at SIGTERM").isGreaterThan(terminated);

            running.set(false);
            client.join(30_000);
            assertThat(failures).as(Files.readString(log)).isEmpty();
            assertThat(ok.get()).isGreaterThan(beforeStop);
            String text = Files.readString(log);
            assertThat(text.split("using the listening socket inherited on standard input", -1)).hasSize(3);
            // 128 + SIGTERM: how a JVM ends on SIGTERM, even after a clean stop (the unit sets SuccessExitStatus=143).
            assertThat(text).contains("restart-loop: server exited with 143");

            Files.writeString(dir.resolve("stop"), "");
            second.destroy();
            assertThat(holder.waitFor(30, TimeUnit.SECONDS)).as(text).isTrue();
        } finally {
            running.set(false);
            Files.writeString(dir.resolve("stop"), "");
            holder.descendants().forEach(ProcessHandle::destroyForcibly);
            holder.destroyForcibly();
            holder.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /**
     * One GET on a new connection.
     *
     * @param slowMillisPer64k when positive, reads 64 KiB at a time with that pause, so the download lasts
     * @param received told at each 64 KiB read: the response is in flight
     */
    private static byte[] get(SSLContext tls, int port, String path, int slowMillisPer64k, Runnable received)
            throws IOException {
        try (SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(60_000); // generous: a request may wait in the backlog while a JVM starts
            socket.setReceiveBufferSize(64 * 1024);
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream response = new ByteArrayOutputStream();
            byte[] buffer = new byte[64 * 1024];
            int n;
            while ((n = in.readNBytes(buffer, 0, buffer.length)) > 0) {
                response.write(buffer, 0, n);
                received.run();
                if (slowMillisPer64k > 0) {
                    sleep(slowMillisPer64k); // a slow reader on purpose: the download is in flight at SIGTERM
                }
            }
            byte[] all = response.toByteArray();
            String head = headOf(all);
            if (!head.startsWith("HTTP/1.1 200 ")) {
                throw new IOException("not a 200: " + head.lines().findFirst().orElse("(no response)"));
            }
            long length = head.lines().filter(l -> l.regionMatches(true, 0, "content-length:", 0, 15))
                    .mapToLong(l -> Long.parseLong(l.substring(15).strip())).findFirst().orElse(-1);
            byte[] body = Arrays.copyOfRange(all, head.length() + 4, all.length);
            if (body.length != length) {
                throw new IOException("truncated: " + body.length + " of " + length + " bytes");
            }
            return body;
        } catch (ConnectException e) {
            throw new IOException("connection refused: nobody held the listening socket", e);
        }
    }

    private static String headOf(byte[] response) {
        String text = new String(response, StandardCharsets.ISO_8859_1);
        int end = text.indexOf("\r\n\r\n");
        return end < 0 ? text : text.substring(0, end);
    }

    /** Waits for a java process under the holder that is not yet known, and for it to serve. */
    private static ProcessHandle awaitServer(Process holder, Map<Long, Boolean> known, Path log) throws Exception {
        ProcessHandle[] found = new ProcessHandle[1];
        Await.until(STARTS, serverLog(log), () -> {
            holder.descendants()
                    .filter(p -> p.info().command().map(c -> c.endsWith("/java")).orElse(false))
                    .filter(p -> !known.containsKey(p.pid()))
                    .findFirst()
                    .ifPresent(p -> found[0] = p);
            return found[0] != null;
        });
        known.put(found[0].pid(), true);
        return found[0];
    }

    private static void awaitAtLeast(AtomicInteger ok, int count, Path log) throws Exception {
        Await.until(STARTS, serverLog(log), () -> ok.get() >= count);
    }

    /** The server's log, to show when it did not come up. */
    private static Supplier<String> serverLog(Path log) {
        return () -> "server log:\n" + read(log);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void sleep(int millis) {
        try {
            Thread.sleep(millis); // the pace of get's slow reader, the thing under test
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String wrapper() throws IOException {
        Path wrapper = Path.of("../deploy/bin/pintle").toAbsolutePath().normalize();
        assertThat(wrapper).exists();
        if (!Files.isExecutable(wrapper)) {
            Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return wrapper.toString();
    }

    private static String javaHome() {
        Path java = Path.of(ProcessHandle.current().info().command().orElseThrow());
        return java.getParent().getParent().toString();
    }
}
