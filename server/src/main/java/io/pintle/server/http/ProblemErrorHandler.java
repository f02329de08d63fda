package io.pintle.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.MediaTypes;
import io.pintle.api.dto.Problem;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
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
        if (code < 500) {
            LOG.info("rejected {} {} from {}: {} {}", request.getMethod(), path,
                    Request.getRemoteAddr(request), code, message);
        } else {
            LOG.warn("error {} on {} {} from {}: {}", code, request.getMethod(), path,
                    Request.getRemoteAddr(request), message);
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, MediaTypes.PROBLEM_JSON);
        response.write(true, ByteBuffer.wrap(body(code, message, path)), callback);
    }

    private static byte[] body(int code, String message, String path) {
        String title = HttpStatus.getMessage(code);
        Problem problem = new Problem("about:blank", title, code, message != null ? message : title, path, null, null);
        try {
            return JSON.writeValueAsBytes(problem);
        } catch (JsonProcessingException e) {
            return ("{\"status\":" + code + "}").getBytes(StandardCharsets.US_ASCII);
        }
    }
}
