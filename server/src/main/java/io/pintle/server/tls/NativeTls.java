package io.pintle.server.tls;

import java.security.GeneralSecurityException;
import java.security.Provider;
import javax.net.ssl.SSLEngine;
import org.conscrypt.Conscrypt;

/**
 * Conscrypt, the native TLS provider: one instance per JVM, made on first use, never registered in the JVM-wide
 * provider list by Pintle (Jetty's Conscrypt ALPN module appends it there itself, last, so the JDK's algorithms
 * keep precedence everywhere else).
 */
final class NativeTls {
    private NativeTls() {}

    /**
     * @return the Conscrypt provider
     * @throws GeneralSecurityException when its native library does not load on this machine
     */
    static Provider provider() throws GeneralSecurityException {
        Holder holder = Holder.INSTANCE;
        if (holder.provider == null) {
            throw new GeneralSecurityException("tls.provider = \"conscrypt\": Conscrypt's native library does not "
                    + "load on this machine (" + holder.failure + "); use provider = \"jdk\"");
        }
        return holder.provider;
    }

    /** @return whether Conscrypt's native library loads on this machine */
    static boolean available() {
        return Holder.INSTANCE.provider != null;
    }

    /** @return why Conscrypt is not available, or null when it is */
    static String failure() {
        return Holder.INSTANCE.failure;
    }

    /** Lets a Conscrypt server engine issue and accept session tickets. @param engine a Conscrypt engine */
    static void enableSessionTickets(SSLEngine engine) {
        Conscrypt.setUseSessionTickets(engine, true);
    }

    /**
     * @param engine an engine from any provider
     * @return whether it is Conscrypt's, whose native state must be freed by closing it (see
     *     {@link NativeEngineRelease})
     */
    static boolean isNative(SSLEngine engine) {
        return available() && Conscrypt.isConscrypt(engine);
    }

    /** @return Conscrypt's version, or null when it is not available */
    static String version() {
        Holder holder = Holder.INSTANCE;
        return holder.provider != null ? Conscrypt.version().major() + "." + Conscrypt.version().minor() + "."
                + Conscrypt.version().patch() : null;
    }

    /** Loaded once, by the JVM's class initialisation (thread-safe, immutable after). */
    private static final class Holder {
        static final Holder INSTANCE = new Holder();

        final Provider provider;
        final String failure;

        private Holder() {
            Provider loaded = null;
            String error = null;
            try {
                Conscrypt.checkAvailability();
                loaded = Conscrypt.newProvider();
            } catch (Throwable e) {
                error = e.toString();
            }
            this.provider = loaded;
            this.failure = error;
        }
    }
}
