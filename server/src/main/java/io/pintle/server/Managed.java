package io.pintle.server;

import org.eclipse.jetty.util.component.AbstractLifeCycle;

/**
 * Puts a plain-Java service (the reloader, the input watcher) under Jetty's lifecycle, so that it starts and stops
 * with the server, in tree order, and shows in {@code server.dump()}; the service itself stays free of Jetty.
 */
final class Managed extends AbstractLifeCycle {
    /** A start or stop step. */
    @FunctionalInterface
    interface Step {
        /** @throws Exception when it fails */
        void run() throws Exception;
    }

    private final String name;
    private final Step start;
    private final Step stop;

    Managed(String name, Step start, Step stop) {
        this.name = name;
        this.start = start;
        this.stop = stop;
    }

    @Override
    protected void doStart() throws Exception {
        start.run();
    }

    @Override
    protected void doStop() throws Exception {
        stop.run();
    }

    @Override
    public String toString() {
        return name;
    }
}
