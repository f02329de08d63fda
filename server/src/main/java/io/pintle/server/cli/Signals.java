package io.pintle.server.cli;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGHUP handling. The JDK's only API for it is {@code sun.misc.Signal} (module jdk.unsupported, present in every
 * JDK 17+); it is reached by reflection because javac warns on any direct use and the build treats warnings as
 * errors. Process-wide by nature, so only {@code serve} installs it, never a test server.
 */
final class Signals {
    private static final Logger LOG = LoggerFactory.getLogger(Signals.class);

    private Signals() {}

    /**
     * @param action what to run on each SIGHUP (on the JVM's signal thread; keep it short)
     * @return whether the handler is installed
     */
    static boolean onHangup(Runnable action) {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Object signal = signalClass.getConstructor(String.class).newInstance("HUP");
            InvocationHandler dispatch = (proxy, method, args) -> switch (method.getName()) {
                case "handle" -> {
                    action.run();
                    yield null;
                }
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                case "toString" -> "pintle SIGHUP handler";
                default -> null;
            };
            Object handler = Proxy.newProxyInstance(handlerClass.getClassLoader(), new Class<?>[] {handlerClass},
                    dispatch);
            Object previous = signalClass.getMethod("handle", signalClass, handlerClass).invoke(null, signal, handler);
            if (previous == handlerClass.getField("SIG_IGN").get(null)) {
                // Started with SIGHUP ignored (nohup): the JVM will never deliver it.
                LOG.warn("SIGHUP is ignored by this process (started under nohup?); use 'pintle reload' instead");
            }
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("cannot handle SIGHUP on this JVM ({}); use 'pintle reload' instead", e.toString());
            return false;
        }
    }
}
