package io.pintle.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.eclipse.jetty.client.Connection;
import org.eclipse.jetty.client.Destination;
import org.junit.jupiter.api.Test;

/** Where a load's connections come from: one host per connection is what the server's per-address shares see. */
class LoadClientTest {
    @Test
    void loopbackHostsNumberFromOneInEachBlockOf250() throws Exception {
        assertThat(LoopbackHosts.host(0)).isEqualTo(InetAddress.getByName("127.1.0.1"));
        assertThat(LoopbackHosts.host(249)).isEqualTo(InetAddress.getByName("127.1.0.250"));
        assertThat(LoopbackHosts.host(250)).isEqualTo(InetAddress.getByName("127.1.1.1"));
        assertThat(LoopbackHosts.host(LoopbackHosts.MAX_HOSTS - 1)).isEqualTo(InetAddress.getByName("127.1.255.250"));
        assertThatThrownBy(() -> LoopbackHosts.host(LoopbackHosts.MAX_HOSTS))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void eachConnectionComesFromItsOwnLoopbackHostInTurn() throws Exception {
        try (ServerSocket server = new ServerSocket()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            LoadClient client = LoadClient.start(Protocol.HTTP_1_1, SSLContext.getDefault(), 2,
                    LoadClient.Hosts.ONE_PER_CONNECTION);
            List<Socket> accepted = new ArrayList<>();
            try {
                // Plain HTTP: the connection is made (and bound) before any byte is sent, TLS or not.
                Destination destination = client.http().resolveDestination(
                        client.http().newRequest("http://127.0.0.1:" + server.getLocalPort() + "/"));
                List<InetAddress> sources = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    Connection connection = destination.newConnection().get(10, TimeUnit.SECONDS);
                    Socket socket = server.accept();
                    accepted.add(socket);
                    sources.add(socket.getInetAddress());
                    connection.close();
                }
                assertThat(sources).containsExactly(InetAddress.getByName("127.1.0.1"),
                        InetAddress.getByName("127.1.0.2"), InetAddress.getByName("127.1.0.1"));
            } finally {
                client.stop();
                for (Socket socket : accepted) {
                    socket.close();
                }
            }
        }
    }
}
