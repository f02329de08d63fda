package io.pintle.server.http.edge;

import io.pintle.server.http.Exchange;
import io.pintle.server.http.Problems;
import io.pintle.api.dto.Problem;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Errors Jetty answers before the request reaches Jersey (malformed requests, headers too large, URIs it
 * refuses) as problem details too, instead of Jetty's HTML page. Never includes a stack trace.
 */
final class ProblemErrorHandler extends ErrorHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ProblemErrorHandler.class);

    ProblemErrorHandler() {
        setShowStacks(false);
        setShowMessageInTitle(false);
    }

    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause,
            Callback callback) {
        String path = request.getHttpURI() != null ? request.getHttpURI().getPath() : null;
        if (cause instanceof EofException) {
            // The client went away (stream reset, connection closed): nobody to answer, nothing to look up.
            LOG.debug("{} {} from {}: the client went away", request.getMethod(), path, Request.getRemoteAddr(request));
            callback.failed(cause);
            return;
        }
        Problem problem;
        if (code < 500) {
            LOG.info("rejected {} {} from {}: {} {}", request.getMethod(), path,
                    Request.getRemoteAddr(request), code, message);
            problem = Problems.plain(code, message, path);
        } else {
            // A server error carries an id to find in the log, and in the request's access log line.
            problem = Problems.incident(cause != null ? cause : new IllegalStateException(message),
                    Exchange.find(request), path);
            if (code != 500) {
                problem = new Problem(problem.type(), HttpStatus.getMessage(code), code, problem.detail(),
                        problem.instance(), null, problem.incident());
            }
        }
        Problems.write(problem, response, callback);
    }
}
