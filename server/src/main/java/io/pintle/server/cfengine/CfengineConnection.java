package io.pintle.server.cfengine;

import io.pintle.server.PintleVersion;
import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import io.pintle.server.nodes.Identification;
import io.pintle.server.reload.ServerSnapshot;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.interfaces.RSAPublicKey;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One agent's connection, after TLS: the identification dialog, then one request at a time, as cf-serverd's
 * {@code ServerTLSSessionEstablish} and {@code BusyWithNewProtocol} answer them. Between requests it holds no
 * thread (Jetty calls {@link #onFillable} when bytes arrive); a request runs on a worker, reads the snapshot once,
 * and writes its answer before the next is read.
 *
 * <p>What it answers: {@code SYNCH <time> STAT <path>}, {@code OPENDIR <path>}, {@code GET <size> <path>},
 * {@code MD5 <path>} with a digest, {@code VERSION}, and cf-runagent's {@code EXEC} (this server's agent, through
 * remote run's launcher) where Rudder grants it. {@code VAR}, {@code CONTEXT}, {@code QUERY}, {@code COOKIE} and
 * {@code SCALLBACK}, which Rudder grants nobody, are refused as cf-serverd refuses what no rule admits. Anything else closes the connection, as a protocol error does in cf-serverd.
 */
final class CfengineConnection extends AbstractConnection {
    private static final Logger LOG = LoggerFactory.getLogger(CfengineConnection.class);
    /** The protocol version offered: "cookie" (3), the latest CFEngine 3.21 knows; agents asking "tls" get 2. */
    static final int LATEST = 3;
    /** cf-serverd's identification buffer. */
    private static final int MAX_IDENTIFICATION = 1024;
    /** The agent's block: file bytes go in multiples of it, so an error text after them starts a block. */
    static final int BLOCK = 2048;
    /** Blocks per write of a file. */
    private static final int BLOCKS_PER_WRITE = 32;
    /** {@code CLOCK_DRIFT}: an hour. */
    static final long CLOCK_DRIFT_SECONDS = 3600;
    private static final Pattern VERSION_LINE = Pattern.compile("CFE_v(\\d{1,9})(?:[ \\t].*)?");
    private static final Pattern USER = Pattern.compile("[A-Za-z0-9._@$\\\\-]{1,64}");
    private static final Pattern GET = Pattern.compile("GET (-?\\d{1,9}) ([^\\n]*)");
    private static final Pattern SYNCH = Pattern.compile("SYNCH (-?\\d{1,19}) STAT ([^\\n]*)");
    /** Rudder's {@code roles}: the conditions an EXEC may define ({@code authorize => {"root"}}). */
    private static final java.util.Set<String> ROLES = java.util.Set.of("force_inventory", "info", "debug", "trace");
    private static final Pattern WORD = Pattern.compile("[A-Z_][A-Z0-9_]*");
    private static final byte[] MD5_REPLY_SAME = "CFD_FALSE".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MD5_REPLY_DIFFERENT = "CFD_TRUE".getBytes(StandardCharsets.US_ASCII);

    private final CfengineDoor door;
    private final InetAddress address;
    private final ByteBuffer in = BufferUtil.allocate(Transaction.BUFSIZE + Transaction.HEADER);
    private volatile boolean welcomed;
    private RSAPublicKey key;
    private String keyName;
    private io.pintle.server.nodes.KeyHash sha256;
    private io.pintle.server.nodes.KeyHash sha512;
    /** The caller of the request being answered, as identified on its snapshot. */
    private Caller current;
    private String user;
    /** An accepted EXEC's arguments, while its class data (cf-runagent's -s, then the terminator) is read. */
    private Exec exec;

    /** An EXEC between its request and its class data. */
    private static final class Exec {
        final List<String> conditions;
        final Decision decision;
        final long start;
        int classLines;

        Exec(List<String> conditions, Decision decision, long start) {
            this.conditions = conditions;
            this.decision = decision;
            this.start = start;
        }
    }

    CfengineConnection(EndPoint endPoint, Executor executor, CfengineDoor door) {
        super(endPoint, executor);
        this.door = door;
        this.address = endPoint.getRemoteSocketAddress() instanceof InetSocketAddress socket
                ? socket.getAddress() : InetAddress.getLoopbackAddress();
    }

    @Override
    public void onOpen() {
        super.onOpen();
        // The server speaks first after the handshake: its latest version. Written without blocking: this runs on
        // the selector. The listener closes a connection not identified within [limits] header_timeout_seconds.
        byte[] hello = ("CFE_v" + LATEST + " pintle " + PintleVersion.current() + "\n")
                .getBytes(StandardCharsets.US_ASCII);
        getEndPoint().write(Callback.from(this::fillInterested, failure -> close()), ByteBuffer.wrap(hello));
    }

    /** @return whether the agent completed the identification dialog */
    boolean welcomed() {
        return welcomed;
    }

    @Override
    public void onFillable() {
        try {
            while (getEndPoint().isOpen()) {
                int filled = getEndPoint().fill(in);
                if (filled < 0) {
                    close();
                    return;
                }
                if (!process()) {
                    return;
                }
                if (filled == 0) {
                    fillInterested();
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("CFEngine connection from {} ended: {}", address.getHostAddress(), e.toString());
            close();
        }
    }

    /** @return false when the connection was closed */
    private boolean process() throws IOException {
        if (!welcomed) {
            if (!identification()) {
                return getEndPoint().isOpen();
            }
        }
        while (welcomed && in.remaining() >= Transaction.HEADER) {
            byte[] header = new byte[Transaction.HEADER];
            in.duplicate().get(header);
            int length = Transaction.length(header);
            if (length < 0) {
                LOG.info("closing the CFEngine connection from {}: not a transaction header ({})",
                        address.getHostAddress(), HexFormat.of().formatHex(header));
                log(door.snapshot(), "BAD", null, "bad", null, 0, 0);
                close();
                return false;
            }
            if (in.remaining() < Transaction.HEADER + length) {
                break;
            }
            byte[] payload = new byte[length];
            in.position(in.position() + Transaction.HEADER);
            in.get(payload);
            if (!(exec != null ? classData(payload) : request(payload))) {
                close();
                return false;
            }
        }
        BufferUtil.compact(in);
        return getEndPoint().isOpen();
    }

    /**
     * The identification dialog: the agent's version line, then {@code IDENTITY USERNAME=...}; its key is checked
     * against the snapshot, and a key no node has is admitted from the allowed networks only
     * ({@code trustkeysfrom}).
     *
     * @return whether it completed
     */
    private boolean identification() throws IOException {
        String text = new String(in.array(), in.arrayOffset() + in.position(), in.remaining(),
                StandardCharsets.ISO_8859_1);
        int first = text.indexOf('\n');
        int second = first < 0 ? -1 : text.indexOf('\n', first + 1);
        if (second < 0) {
            if (in.remaining() >= MAX_IDENTIFICATION) {
                refuse("identification", "identification longer than " + MAX_IDENTIFICATION + " bytes");
            }
            return false;
        }
        String versionLine = text.substring(0, first);
        String identityLine = text.substring(first + 1, second);
        in.position(in.position() + second + 1);
        Matcher version = VERSION_LINE.matcher(versionLine);
        if (!version.matches()) {
            refuse("identification", "protocol version negotiation failed: " + CfengineDoor.printable(versionLine));
            return false;
        }
        int wanted = Integer.parseInt(version.group(1));
        if (wanted == 1) {
            refuse("classic-protocol", "the agent asked for the classic protocol inside TLS");
            return false;
        }
        if (wanted < 2 || wanted > LATEST) {
            refuse("identification", "protocol version " + wanted + " (this server speaks 2 and 3)");
            return false;
        }
        if (!identityLine.startsWith("IDENTITY")) {
            refuse("identification", "no IDENTITY line: " + CfengineDoor.printable(identityLine));
            return false;
        }
        user = "";
        for (String field : identityLine.substring("IDENTITY".length()).trim().split("[ \\t]+")) {
            int equals = field.indexOf('=');
            if (equals > 0 && field.substring(0, equals).equals("USERNAME")) {
                String value = field.substring(equals + 1);
                if (!USER.matcher(value).matches()) {
                    refuse("identification", "invalid IDENTITY USERNAME: " + CfengineDoor.printable(value));
                    return false;
                }
                user = value;
            }
        }
        X509Certificate leaf = peerCertificate();
        if (leaf == null || !(leaf.getPublicKey() instanceof RSAPublicKey rsa)) {
            refuse("not-rsa", "the agent's certificate holds no RSA key (CFEngine keys are RSA)");
            return false;
        }
        key = rsa;
        keyName = CfengineKey.md5(rsa);
        sha256 = io.pintle.server.nodes.KeyHash.sha256(rsa);
        sha512 = io.pintle.server.nodes.KeyHash.of("sha512", rsa);
        ServerSnapshot snapshot = door.snapshot();
        Identification identification = CfengineDoor.identify(snapshot, sha256, sha512, keyName);
        boolean allowedNetwork = snapshot.networks().contains(address);
        if (!(identification instanceof Identification.Authenticated) && !allowedNetwork) {
            refuse("untrusted-key", "TRUST FAILED: the key " + keyName + " is no node's and "
                    + address.getHostAddress() + " is not in the allowed networks (trustkeysfrom)");
            return false;
        }
        welcomed = true;
        write(ByteBuffer.wrap(("OK WELCOME" + (user.isEmpty() ? "" : " USERNAME=" + user) + "\n")
                .getBytes(StandardCharsets.US_ASCII)));
        LOG.debug("CFEngine agent {} ({}, {}) identified, protocol {}", address.getHostAddress(), keyName,
                identification instanceof Identification.Authenticated a ? "node " + a.node() : "no node", wanted);
        return true;
    }

    private X509Certificate peerCertificate() {
        if (!(getEndPoint() instanceof SslConnection.SslEndPoint tls)) {
            return null;
        }
        try {
            Certificate[] chain = tls.getSslConnection().getSSLEngine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate leaf ? leaf : null;
        } catch (SSLPeerUnverifiedException none) {
            return null;
        }
    }

    private void refuse(String reason, String detail) {
        door.metrics().cfengineRefused(reason);
        LOG.info("refused the CFEngine connection from {}{}: {}", address.getHostAddress(),
                keyName != null ? " (" + keyName + ")" : "", detail);
        close();
    }

    /**
     * @param payload one request
     * @return whether the connection stays open
     */
    private boolean request(byte[] payload) throws IOException {
        long start = System.nanoTime();
        int nul = indexOf(payload, (byte) 0);
        String text = new String(payload, 0, nul < 0 ? payload.length : nul, StandardCharsets.UTF_8);
        Matcher word = WORD.matcher(text);
        String command = word.lookingAt() ? word.group() : "";
        boolean complete = word.lookingAt() && (text.length() == command.length() || text.charAt(command.length()) == ' ');
        ServerSnapshot snapshot = door.snapshot();
        Caller caller = new Caller(address, CfengineDoor.identify(snapshot, sha256, sha512, keyName));
        current = caller;
        if (!complete) {
            return protocolError(snapshot, caller, "OTHER", text, start);
        }
        switch (command) {
            case "SYNCH" -> {
                Matcher synch = SYNCH.matcher(text);
                if (!synch.matches() || synch.group(2).isEmpty()) {
                    return protocolError(snapshot, caller, "STAT", text, start);
                }
                stat(snapshot, caller, Long.parseLong(synch.group(1)), synch.group(2), start);
                return true;
            }
            case "OPENDIR" -> {
                String path = argument(text, command);
                if (path.isEmpty()) {
                    return protocolError(snapshot, caller, command, text, start);
                }
                opendir(snapshot, caller, path, start);
                return true;
            }
            case "GET" -> {
                Matcher get = GET.matcher(text);
                if (!get.matches()) {
                    return protocolError(snapshot, caller, command, text, start);
                }
                int size = Integer.parseInt(get.group(1));
                if (size <= 0 || size > Transaction.BUFSIZE) {
                    return protocolError(snapshot, caller, command, text, start);
                }
                get(snapshot, caller, size, get.group(2), start);
                return true;
            }
            case "MD5" -> {
                String path = argument(text, command);
                int digestStart = (nul < 0 ? payload.length : nul) + 2;
                int digestLength = payload.length - digestStart;
                if (path.isEmpty() || nul < 0 || (digestLength != 16 && digestLength != 32)) {
                    return protocolError(snapshot, caller, command, text + " (" + payload.length + " bytes, "
                            + Math.max(digestLength, 0) + " after the path)", start);
                }
                md5(snapshot, caller, path, Arrays.copyOfRange(payload, digestStart, payload.length), start);
                return true;
            }
            case "VERSION" -> {
                write(Transaction.done("OK: " + PintleVersion.current()));
                log(snapshot, command, null, "ok", new Decision.Allow("version: open to any identified agent"), 0,
                        System.nanoTime() - start);
                return true;
            }
            case "EXEC" -> {
                return exec(snapshot, caller, text.substring(command.length()), start);
            }
            case "VAR", "CONTEXT", "QUERY", "COOKIE", "SCALLBACK" -> {
                // Granted to nobody by cf-serverd.st: refused as cf-serverd refuses what no rule admits; a
                // call-collect gets no answer and the connection ends.
                if (!command.equals("SCALLBACK")) {
                    write(Transaction.done(Transaction.FAILED));
                }
                log(snapshot, command, null, "denied", new Decision.Deny("not-granted", command
                        + " is granted to nobody on this server (cf-serverd.st)"), 0, System.nanoTime() - start);
                return !command.equals("SCALLBACK");
            }
            default -> {
                return protocolError(snapshot, caller, "OTHER", text, start);
            }
        }
    }

    /**
     * cf-runagent's {@code EXEC [-D classes] [-b bundles]}, as cf-serverd's {@code DoExec2}: the rudder command's
     * access rule, user root ({@code allowusers}), then only {@code -D} with Rudder's roles ({@code force_inventory},
     * {@code info}, {@code debug}, {@code trace}). Its class data follows it at once; the run starts at its
     * terminator.
     *
     * @return whether the connection stays open
     */
    private boolean exec(ServerSnapshot snapshot, Caller caller, String arguments, long start) throws IOException {
        Decision decision = io.pintle.server.access.Access.decide(io.pintle.server.access.Rule.RUN_COMMAND, "EXEC",
                sha256.toString(), snapshot, caller, null,
                io.pintle.server.access.Credentials.NONE);
        if (decision instanceof Decision.Allow && !"root".equals(user)) {
            decision = new Decision.Deny("user-not-allowed", "EXEC as user '" + user + "': only root may run the "
                    + "agent (allowusers)");
        }
        if (decision instanceof Decision.Deny) {
            write(Transaction.done(Transaction.FAILED), terminator());
            log(snapshot, "EXEC", null, "denied", decision, 0, System.nanoTime() - start);
            return false;
        }
        List<String> conditions = new java.util.ArrayList<>();
        String[] words = arguments.trim().isEmpty() ? new String[0] : arguments.trim().split("[ \\t]+");
        String refusal = null;
        for (int i = 0; i < words.length && refusal == null; i++) {
            String word = words[i];
            String list;
            if (word.equals("-D") || word.equals("-b")) {
                list = i + 1 < words.length ? words[++i] : "";
            } else if (word.startsWith("-D") || word.startsWith("-b")) {
                list = word.substring(2);
            } else {
                refusal = "EXEC denied: invalid arguments: " + CfengineDoor.printable(arguments.trim());
                break;
            }
            if (word.startsWith("-b")) {
                refusal = "EXEC denied bundle activation (check cf-serverd verbose output)";
                break;
            }
            for (String condition : list.split(",")) {
                if (condition.isEmpty()) {
                    continue;
                }
                if (!ROLES.contains(condition)) {
                    refusal = "EXEC denied role activation (check cf-serverd verbose output)";
                    break;
                }
                conditions.add(condition);
            }
        }
        if (refusal != null) {
            exec = new Exec(null, new Decision.Deny("role-not-allowed", refusal), start);
        } else {
            exec = new Exec(List.copyOf(conditions), decision, start);
        }
        return true;
    }

    /**
     * The class data cf-runagent sends after EXEC, up to its terminator; then the refusal, or the run.
     *
     * @return whether the connection stays open
     */
    private boolean classData(byte[] payload) throws IOException {
        Exec pending = exec;
        String text = new String(payload, StandardCharsets.UTF_8);
        ServerSnapshot snapshot = door.snapshot();
        if (!text.startsWith(Transaction.TERMINATOR)) {
            // cf-runagent -s: classes this server should have. It evaluates no policy, so none matches (after ten
            // lines cf-serverd gives up too).
            pending.classLines++;
            if (pending.classLines < 10) {
                return true;
            }
        }
        exec = null;
        if (pending.classLines > 0) {
            write(Transaction.done("Hello " + address.getHostAddress() + ", nothing relevant to do here...\n\n"),
                    terminator());
            log(snapshot, "EXEC", null, "denied", new Decision.Deny("no-class-match", "cf-runagent -s names "
                    + "classes; this server evaluates none"), 0, System.nanoTime() - pending.start);
            return true;
        }
        if (pending.decision instanceof Decision.Deny deny) {
            write(Transaction.done(deny.detail()), terminator());
            log(snapshot, "EXEC", null, "denied", deny, 0, System.nanoTime() - pending.start);
            return true;
        }
        List<String> argv = new java.util.ArrayList<>(snapshot.config().remoteRun().run());
        if (!pending.conditions.isEmpty()) {
            argv.add("-D");
            argv.add(String.join(",", pending.conditions));
        }
        write(Transaction.done("pintle executing cfruncommand: " + String.join(" ", argv) + "\n"));
        IOException[] failed = new IOException[1];
        Integer exit = door.agentRun().run(snapshot, pending.conditions, line -> {
            synchronized (this) {
                if (failed[0] != null) {
                    return;
                }
                byte[] bytes = ("> " + line).getBytes(StandardCharsets.UTF_8);
                int length = Math.min(bytes.length, Transaction.MAX_PAYLOAD - 2);
                byte[] payloadLine = java.util.Arrays.copyOf(bytes, length + 1);
                payloadLine[length] = '\n';
                try {
                    write(Transaction.of(payloadLine, payloadLine.length, Transaction.DONE));
                } catch (IOException e) {
                    failed[0] = e;
                }
            }
        });
        synchronized (this) {
            if (failed[0] != null) {
                throw failed[0];
            }
        }
        if (exit != null) {
            write(Transaction.done("(exit code: " + exit + ")\n"));
        }
        write(terminator());
        log(snapshot, "EXEC", null, exit != null && exit == 0 ? "ok" : "failed", pending.decision, 0,
                System.nanoTime() - pending.start);
        return true;
    }

    private static String argument(String text, String command) {
        int newline = text.indexOf('\n');
        String line = newline < 0 ? text : text.substring(0, newline);
        return line.length() > command.length() + 1 ? line.substring(command.length() + 1) : "";
    }

    /** As cf-serverd: "BAD: Request denied", then the connection is closed. */
    private boolean protocolError(ServerSnapshot snapshot, Caller caller, String command, String text, long start)
            throws IOException {
        LOG.info("closing the CFEngine connection from {} ({}): illegal request: {}", address.getHostAddress(),
                keyName, CfengineDoor.printable(text));
        write(Transaction.done("BAD: Request denied"));
        log(snapshot, command, null, "bad", null, 0, System.nanoTime() - start);
        return false;
    }

    private void stat(ServerSnapshot snapshot, Caller caller, long clientTime, String path, long start)
            throws IOException {
        CfengineDoor.Resolution resolution = allowed(snapshot, caller, "STAT", path, start);
        if (resolution == null) {
            return;
        }
        long now = door.clock().instant().getEpochSecond();
        if (snapshot.config().cfengine().denyBadClocks() && Math.abs(now - clientTime) > CLOCK_DRIFT_SECONDS) {
            write(Transaction.done("BAD: Clocks are too far unsynchronized " + now + "/" + clientTime));
            log(snapshot, "STAT", path, "denied", new Decision.Deny("bad-clock", "the agent's clock is "
                    + (now - clientTime) + " s off (denybadclocks)"), 0, System.nanoTime() - start);
            return;
        }
        Map<String, Object> unix;
        try {
            unix = Files.readAttributes(resolution.real(), "unix:*");
        } catch (IOException gone) {
            write(Transaction.done("BAD: unable to stat file " + path));
            log(snapshot, "STAT", path, "missing", resolution.decision(), 0, System.nanoTime() - start);
            return;
        }
        int mode = (Integer) unix.get("mode");
        long size = (Long) unix.get("size");
        int type = switch (mode & 0170000) {
            case 0040000 -> 2;
            case 0010000 -> 3;
            case 0060000 -> 4;
            case 0020000 -> 5;
            case 0140000 -> 6;
            default -> 0;
        };
        long ino = (Long) unix.get("ino");
        String line = "OK: " + type + ' ' + (mode & 07777) + " 0 " + unix.get("uid") + ' ' + unix.get("gid") + ' '
                + size + ' ' + seconds(unix.get("lastAccessTime")) + ' ' + seconds(unix.get("lastModifiedTime")) + ' '
                + seconds(unix.get("ctime")) + " 0 " + (int) ino + ' ' + unix.get("nlink")
                + ' ' + unix.get("dev");
        write(Transaction.done(line), Transaction.done("OK:"));
        log(snapshot, "STAT", path, "ok", resolution.decision(), 0, System.nanoTime() - start);
    }

    private static long seconds(Object time) {
        return time instanceof FileTime fileTime ? fileTime.to(TimeUnit.SECONDS) : 0;
    }

    private void opendir(ServerSnapshot snapshot, Caller caller, String path, long start) throws IOException {
        CfengineDoor.Resolution resolution = allowed(snapshot, caller, "OPENDIR", path, start);
        if (resolution == null) {
            return;
        }
        if (!Files.isDirectory(resolution.real(), LinkOption.NOFOLLOW_LINKS)) {
            write(Transaction.done("BAD: cfengine, couldn't open dir " + path));
            log(snapshot, "OPENDIR", path, "missing", resolution.decision(), 0, System.nanoTime() - start);
            return;
        }
        // Names NUL-terminated, packets kept under CF_BUFSIZE - CF_MAXLINKSIZE, each ended by one more NUL; the last
        // holds the terminator. "." and ".." as readdir lists them.
        byte[] packet = new byte[Transaction.BUFSIZE];
        int offset = 0;
        java.util.List<ByteBuffer> out = new java.util.ArrayList<>();
        java.util.List<String> names = new java.util.ArrayList<>();
        names.add(".");
        names.add("..");
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(resolution.real())) {
            for (Path entry : entries) {
                names.add(entry.getFileName().toString());
            }
        } catch (IOException unreadable) {
            write(Transaction.done("BAD: cfengine, couldn't open dir " + path));
            log(snapshot, "OPENDIR", path, "failed", resolution.decision(), 0, System.nanoTime() - start);
            return;
        }
        for (String name : names) {
            byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
            if (bytes.length >= 256) {
                continue;
            }
            if (offset + bytes.length + 1 >= Transaction.BUFSIZE - 256) {
                packet[offset] = 0;
                out.add(Transaction.of(packet, offset + 1, Transaction.MORE));
                offset = 0;
            }
            System.arraycopy(bytes, 0, packet, offset, bytes.length);
            packet[offset + bytes.length] = 0;
            offset += bytes.length + 1;
        }
        byte[] terminator = Transaction.TERMINATOR.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(terminator, 0, packet, offset, terminator.length);
        packet[offset + terminator.length] = 0;
        offset += terminator.length + 1;
        packet[offset] = 0;
        out.add(Transaction.of(packet, offset + 1, Transaction.DONE));
        write(out.toArray(new ByteBuffer[0]));
        log(snapshot, "OPENDIR", path, "ok", resolution.decision(), 0, System.nanoTime() - start);
    }

    private void get(ServerSnapshot snapshot, Caller caller, int bufferSize, String path, long start)
            throws IOException {
        CfengineDoor.Resolution resolution = allowed(snapshot, caller, "GET", path, start);
        if (resolution == null) {
            return;
        }
        FileChannel channel;
        try {
            if (!Files.isRegularFile(resolution.real(), LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException("not a regular file");
            }
            channel = FileChannel.open(resolution.real(), StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            // cf-serverd's open failure: the refusal text, padded to the agent's buffer, in place of the bytes.
            write(padded(Transaction.FAILED, bufferSize));
            log(snapshot, "GET", path, "failed", resolution.decision(), 0, System.nanoTime() - start);
            return;
        }
        long sent = 0;
        String outcome = "ok";
        try (channel) {
            long size = channel.size();
            ByteBuffer block = ByteBuffer.allocate(BLOCK * BLOCKS_PER_WRITE);
            while (sent < size) {
                block.clear();
                block.limit((int) Math.min(block.capacity(), size - sent));
                int read = 0;
                while (block.hasRemaining()) {
                    int n = channel.read(block);
                    if (n < 0) {
                        break;
                    }
                    read += n;
                }
                if (block.hasRemaining() || channel.size() != size) {
                    // Shrunk or grew while sent: the bytes so far in whole blocks, then cf-serverd's "changed" text
                    // where the agent reads its next block.
                    int whole = read - read % BLOCK;
                    block.flip().limit(whole);
                    write(block, padded(Transaction.CHANGED + ": " + path, BLOCK));
                    sent += whole;
                    outcome = "failed";
                    break;
                }
                block.flip();
                write(block);
                sent += read;
            }
        }
        if ("ok".equals(outcome)) {
            door.delivered(snapshot, caller, resolution, 200);
        }
        log(snapshot, "GET", path, outcome, resolution.decision(), sent, System.nanoTime() - start);
    }

    private void md5(ServerSnapshot snapshot, Caller caller, String path, byte[] digest, long start)
            throws IOException {
        CfengineDoor.Resolution resolution = allowed(snapshot, caller, "MD5", path, start);
        if (resolution == null) {
            return;
        }
        boolean same = false;
        String outcome = "ok";
        try {
            if (Files.isRegularFile(resolution.real(), LinkOption.NOFOLLOW_LINKS)) {
                String hex = door.digests().compute(io.pintle.server.policy.FileStat.of(resolution.real()),
                        digest.length == 16 ? "MD5" : "SHA-256");
                same = Arrays.equals(HexFormat.of().parseHex(hex), digest);
            }
        } catch (IOException changed) {
            outcome = "failed";
        }
        write(Transaction.of(same ? MD5_REPLY_SAME : MD5_REPLY_DIFFERENT,
                same ? MD5_REPLY_SAME.length : MD5_REPLY_DIFFERENT.length, Transaction.DONE));
        if (same) {
            door.delivered(snapshot, caller, resolution, 304);
        }
        log(snapshot, "MD5", path, outcome, resolution.decision(), 0, System.nanoTime() - start);
    }

    /**
     * Resolves the path and asks the access function; a refusal is answered here. Every refusal looks the same to
     * the agent ({@code CF_FAILEDSTR}); the log says which it was.
     *
     * @return the resolution when allowed, or null when refused (already answered and logged)
     */
    private CfengineDoor.Resolution allowed(ServerSnapshot snapshot, Caller caller, String command, String path,
            long start) throws IOException {
        CfengineDoor.Resolution resolution = door.resolve(snapshot, caller, command, path);
        if (resolution.allowed()) {
            return resolution;
        }
        write(Transaction.done(Transaction.FAILED));
        log(snapshot, command, resolution.requested(), resolution.outcome(), resolution.decision(), 0,
                System.nanoTime() - start);
        return null;
    }

    private void log(ServerSnapshot snapshot, String command, String path, String outcome, Decision decision,
            long bytes, long nanos) {
        door.log(snapshot, address, key != null ? current : null, keyName, command, path, outcome, decision, bytes,
                nanos);
    }

    private static ByteBuffer terminator() {
        byte[] text = Transaction.TERMINATOR.getBytes(StandardCharsets.US_ASCII);
        byte[] payload = Arrays.copyOf(text, text.length + 1);
        return Transaction.of(payload, payload.length, Transaction.DONE);
    }

    private static ByteBuffer padded(String text, int size) {
        byte[] bytes = new byte[size];
        byte[] message = text.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(message, 0, bytes, 0, Math.min(message.length, size - 1));
        return ByteBuffer.wrap(bytes);
    }

    private static int indexOf(byte[] bytes, byte value) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == value) {
                return i;
            }
        }
        return -1;
    }

    /** Writes and waits: this runs on a worker, one request at a time; a stalled reader hits the idle timeout. */
    private void write(ByteBuffer... buffers) throws IOException {
        try (Blocker.Callback callback = Blocker.callback()) {
            getEndPoint().write(callback, buffers);
            callback.block();
        }
    }
}
