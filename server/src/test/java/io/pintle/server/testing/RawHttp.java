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
     * @param response an HTTP/1.1 answer
     * @return its status (the test fails when it has no status line)
     */
    public static int status(String response) {
        Matcher matcher = STATUS_LINE.matcher(response);
        assertThat(matcher.find()).as("a status line in %s", response).isTrue();
        return Integer.parseInt(matcher.group(1));
    }
}
