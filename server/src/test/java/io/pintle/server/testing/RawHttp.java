package io.pintle.server.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/** Reading HTTP/1.1 answers off a raw socket, for tests that write bytes a well-behaved client would not. */
public final class RawHttp {
    private static final Pattern STATUS_LINE = Pattern.compile("^HTTP/1\\.1 (\\d{3}) ");
    /** CR LF CR LF, as the last four bytes read. */
    private static final int HEAD_END = 0x0d0a0d0a;
    private static final Pattern CONTENT_LENGTH = Pattern.compile("(?im)^content-length:\\s*(\\d+)\\s*$");

    private RawHttp() {}

    /**
     * @param socket a connection whose answer is read
     * @return what came until the server closed it, or until the socket's read timeout
     * @throws IOException on another read failure
     */
    public static String readUntilClosed(Socket socket) throws IOException {
        ByteArrayOutputStream response = new ByteArrayOutputStream();
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[8192];
        try {
            for (int n; (n = in.read(buffer)) > 0; ) {
                response.write(buffer, 0, n);
            }
        } catch (SocketTimeoutException | SSLException endOfExchange) {
            // What came before the timeout or the close is the answer.
        }
        return response.toString(StandardCharsets.ISO_8859_1);
    }

    /**
     * Reads one answer on a connection the server may keep open: its head, then as many body bytes as its
     * {@code Content-Length} says (none when it has none); not waiting for a close that a kept-alive connection
     * does not bring.
     *
     * @param socket a connection whose next answer is read
     * @return the answer, or what came before the server closed the connection or the socket's read timeout
     * @throws IOException on another read failure
     */
    public static String readResponse(Socket socket) throws IOException {
        ByteArrayOutputStream response = new ByteArrayOutputStream();
        InputStream in = socket.getInputStream();
        try {
            if (readHead(in, response)) {
                Matcher length = CONTENT_LENGTH.matcher(response.toString(StandardCharsets.ISO_8859_1));
                if (length.find()) {
                    response.writeBytes(in.readNBytes(Integer.parseInt(length.group(1))));
                }
            }
        } catch (SocketTimeoutException | SSLException endOfExchange) {
            // What came before the timeout or the close is the answer.
        }
        return response.toString(StandardCharsets.ISO_8859_1);
    }

    /**
     * @param in a connection's input, at the start of an answer
     * @return the answer's head, up to and with its empty line (less when the connection ends first)
     * @throws IOException on a read failure
     */
    public static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        readHead(in, head);
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    /** @return whether the head ended with its empty line (false: the connection ended first) */
    private static boolean readHead(InputStream in, ByteArrayOutputStream into) throws IOException {
        for (int last4 = 0; last4 != HEAD_END; ) {
            int b = in.read();
            if (b < 0) {
                return false;
            }
            into.write(b);
            last4 = last4 << 8 | b;
        }
        return true;
    }

    /**
     * @param response an HTTP/1.1 answer
     * @return its status (the test fails when it has no status line)
     */
    public static int status(String response) {
        Matcher matcher = STATUS_LINE.matcher(response);
        assertThat(matcher.find()).as("a status line in %s", response).isTrue();
        return Integer.parseInt(matcher.group(1));
    }
}
