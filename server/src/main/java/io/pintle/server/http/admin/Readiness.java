package io.pintle.server.http.admin;

import org.eclipse.jetty.util.component.LifeCycle;

/**
 * Whether the listeners are up, following the Jetty server's lifecycle: false until {@code start()} has returned
 * (connectors are started last), false again as soon as a stop begins, so a load balancer stops sending work while
 * in-flight requests drain.
 */
public final class Readiness implements LifeCycle.Listener {
    private volatile boolean up;

    /** @return whether the server has started and is not stopping */
    public boolean up() {
        return up;
    }

    @Override
    public void lifeCycleStarted(LifeCycle event) {
        up = true;
    }

    @Override
    public void lifeCycleStopping(LifeCycle event) {
        up = false;
    }

    @Override
    public void lifeCycleFailure(LifeCycle event, Throwable cause) {
        up = false;
    }
}
