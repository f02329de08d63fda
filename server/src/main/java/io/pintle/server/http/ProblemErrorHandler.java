package io.pintle.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.MediaTypes;
import io.pintle.api.dto.Problem;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
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
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = LoggerFactory.getLogger(ProblemErrorHandler.class);

    ProblemErrorHandler() {
        setShowStacks(false);
        setShowMessageInTitle(false);
    }

    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause,
            Callback callback) {
        String path = request.getHttpURI() != null ? request.getHttpURI().getPath() : null;
        String incident = null;
        if (code < 500) {
            LOG.info("rejected {} {} from {}: {} {}", request.getMethod(), path,
                    Request.getRemoteAddr(request), code, message);
        } else {
            // Same contract as ProblemExceptionMapper: a server error carries an id to find in the log.
            incident = UUID.randomUUID().toString();
            AccessRecord.of(request).incident(incident);
            LOG.warn("incident {}: error {} on {} {} from {}: {}", incident, code, request.getMethod(), path,
                    Request.getRemoteAddr(request), message, cause);
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, MediaTypes.PROBLEM_JSON);
        response.write(true, ByteBuffer.wrap(body(code, message, path, incident)), callback);
    }

    private static byte[] body(int code, String message, String path, String incident) {
        String title = HttpStatus.getMessage(code);
        Problem problem = new Problem("about:blank", title, code, message != null ? message : title, path, null,
                incident);
        try {
            return JSON.writeValueAsBytes(problem);
        } catch (JsonProcessingException e) {
            return ("{\"status\":" + code + "}").getBytes(StandardCharsets.US_ASCII);
        }
    }
}
