package io.pintle.server.systemd;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.channels.Channel;
import java.nio.channels.ServerSocketChannel;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the service manager passed to this process: where to send readiness notifications, and the node-facing
 * listening socket when a socket unit bound it. Read once by {@code pintle serve}; tests build their own.
 *
 * @param notifier where {@code READY=1} and friends go (possibly disabled)
 * @param listener the inherited listening socket for the TLS listener, or empty to bind the configured address
 */
public record SystemdHandoff(SystemdNotifier notifier, Optional<ServerSocketChannel> listener) {
    private static final Logger LOG = LoggerFactory.getLogger(SystemdHandoff.class);

    public SystemdHandoff {
        Objects.requireNonNull(notifier);
        Objects.requireNonNull(listener);
    }

    /** @return no notification, no inherited socket: what tests and {@code pintle demo} use */
    public static SystemdHandoff none() {
        return new SystemdHandoff(SystemdNotifier.disabled(), Optional.empty());
    }

    /**
     * Reads {@code $NOTIFY_SOCKET} and standard input. A socket unit's listening socket arrives as fd 3
     * ({@code LISTEN_FDS}); {@code deploy/bin/pintle} moves it to fd 0, the only descriptor the JDK can turn into a
     * channel ({@link System#inheritedChannel()}). Anything else on fd 0 (a terminal, /dev/null, a pipe) means
     * "bind the configured address yourself".
     *
     * @return what this process was handed
     */
    public static SystemdHandoff fromProcess() {
        Optional<ServerSocketChannel> listener = Optional.empty();
        try {
            Channel inherited = System.inheritedChannel();
            if (inherited instanceof ServerSocketChannel server) {
                SocketAddress address = server.getLocalAddress();
                LOG.info("using the listening socket inherited on standard input ({}) for the TLS listener; "
                        + "the configured general.listen is not bound", address);
                listener = Optional.of(server);
            } else if (inherited != null) {
                LOG.debug("standard input is a {}, not a listening socket: binding the configured address",
                        inherited.getClass().getSimpleName());
            }
        } catch (IOException | SecurityException e) {
            LOG.warn("cannot inspect standard input for an inherited socket ({}); binding the configured address",
                    e.toString());
        }
        return new SystemdHandoff(SystemdNotifier.fromEnvironment(), listener);
    }
}
