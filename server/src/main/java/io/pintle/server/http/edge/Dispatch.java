package io.pintle.server.http.edge;

import io.pintle.server.http.Exchange;
import io.pintle.server.access.Route;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The one dispatch step: it reads the request's {@link Route} (found once, at the edge) and hands the request to
 * the one handler that answers it ({@link Route#answerer}), as Jetty's {@code PathMappingsHandler} does with a
 * path. None of those handlers wraps another or passes a request on: the file pipeline, the order channel, the
 * webapp proxy, the node-facing Jersey application and the admin one each see their own routes only.
 *
 * <p>Non-blocking, as each of its handlers (the Jersey applications behind {@link WorkerDispatch}): a plain
 * download is still answered on the thread that read it, with one switch more.
 */
final class Dispatch extends Handler.AbstractContainer {
    private final Handler files;
    private final Handler orders;
    private final Handler webapp;
    private final Handler jersey;
    private final Handler admin;
    private final List<Handler> handlers;

    /**
     * @param files the file pipeline
     * @param orders the order channel's handler
     * @param webapp the webapp proxy, or null where {@code [webapp] proxy} is not set (Jersey answers its routes:
     *     404)
     * @param jersey the node-facing Jersey application, on a worker
     * @param admin the admin Jersey application, on a worker
     */
    Dispatch(Handler files, Handler orders, Handler webapp, Handler jersey, Handler admin) {
        super(false);
        this.files = files;
        this.orders = orders;
        this.webapp = webapp != null ? webapp : jersey;
        this.jersey = jersey;
        this.admin = admin;
        List<Handler> all = new ArrayList<>(List.of(files, orders, jersey, admin));
        if (webapp != null) {
            all.add(webapp);
        }
        this.handlers = List.copyOf(all);
        for (Handler handler : handlers) {
            addBean(handler, true);
        }
    }

    @Override
    public List<Handler> getHandlers() {
        return handlers;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        Handler next = switch (Exchange.of(request).route().answerer(request.getMethod())) {
            case FILES -> files;
            case ORDERS -> orders;
            case WEBAPP -> webapp;
            case JERSEY -> jersey;
            case ADMIN -> admin;
        };
        return next.handle(request, response, callback);
    }
}
