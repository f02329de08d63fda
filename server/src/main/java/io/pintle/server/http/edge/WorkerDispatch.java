package io.pintle.server.http.edge;

import java.util.concurrent.Executor;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.VirtualThreads;
import org.eclipse.jetty.util.thread.ThreadPool;

/**
 * Runs a blocking handler (a Jersey application) on a worker thread, so that everything in front of it can be
 * non-blocking. Jetty reads a server's handler tree once at start: when every handler in it is non-blocking, it
 * parses and answers a request on the thread that read it (the selector's), with no hand-off to a worker and back,
 * which is most of what a small keep-alive download costs. This wrapper is what makes the tree non-blocking: it
 * declares itself so and hands the request to the worker pool (virtual threads where the JVM has them).
 *
 * <p>What runs in front of it on the selector thread must never wait: {@link ExchangeHandler}, the overload gate,
 * compression, context matching and {@code FileHandler}'s plain downloads (a few system calls on local files, a
 * body read in one go or streamed by callbacks; what may take longer it hands to a worker itself). Anything else
 * is Jersey's, behind this.
 */
final class WorkerDispatch extends Handler.Wrapper {
    /**
     * @param blocking the handler to run on a worker thread
     */
    WorkerDispatch(Handler blocking) {
        super(blocking);
    }

    @Override
    public InvocationType getInvocationType() {
        return InvocationType.NON_BLOCKING;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        Handler next = getHandler();
        if (next == null) {
            return false;
        }
        executor().execute(() -> {
            try {
                if (!next.handle(request, response, callback)) {
                    Response.writeError(request, response, callback, HttpStatus.NOT_FOUND_404);
                }
            } catch (Throwable failure) {
                Response.writeError(request, response, callback, failure);
            }
        });
        return true;
    }

    private Executor executor() {
        ThreadPool pool = getServer().getThreadPool();
        Executor virtual = VirtualThreads.getVirtualThreadsExecutor(pool);
        return virtual != null ? virtual : pool;
    }
}
