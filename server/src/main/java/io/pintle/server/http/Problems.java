package io.pintle.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.MediaTypes;
import io.pintle.api.dto.Problem;
import io.pintle.server.problem.PintleException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one problem writer (RFC 9457 {@code application/problem+json}): the file pipeline, the overload gate,
 * Jetty's own refusals ({@code ProblemErrorHandler}) and Jersey's mapper ({@code ProblemExceptionMapper}) all build
 * their body here. A refusal says what went wrong in the operator's words and carries its stable reason code; a
 * server error carries only an incident id, which is logged with the stack trace and put in the access log line.
 */
public final class Problems {
    private static final Logger LOG = LoggerFactory.getLogger(Problems.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TYPE_PREFIX = "urn:pintle:problem:";
    /** The detail of every server error: the rest is in the log, under the incident id. */
    public static final String SERVER_ERROR_DETAIL = "an internal error occurred; the server log has the details";

    private Problems() {}

    /**
     * @param refusal a refusal of the request
     * @param instance the request path
     * @return its problem
     */
    public static Problem of(PintleException refusal, String instance) {
        int status = status(refusal);
        return new Problem(TYPE_PREFIX + refusal.reason(), title(refusal, status), status, refusal.detail(),
                instance, refusal.reason(), null);
    }

    /**
     * @param refusal a refusal of the request
     * @return the HTTP status of its kind
     */
    public static int status(PintleException refusal) {
        if (refusal instanceof PintleException.AccessDenied) {
            return HttpStatus.FORBIDDEN_403;
        } else if (refusal instanceof PintleException.NotFound) {
            return HttpStatus.NOT_FOUND_404;
        } else if (refusal instanceof PintleException.Conflict) {
            return HttpStatus.CONFLICT_409;
        } else if (refusal instanceof PintleException.InvalidRequest) {
            return HttpStatus.BAD_REQUEST_400;
        } else if (refusal instanceof PintleException.Unavailable) {
            return HttpStatus.SERVICE_UNAVAILABLE_503;
        } else if (refusal instanceof PintleException.TooLarge) {
            return HttpStatus.PAYLOAD_TOO_LARGE_413;
        } else if (refusal instanceof PintleException.LengthRequired) {
            return HttpStatus.LENGTH_REQUIRED_411;
        } else if (refusal instanceof PintleException.UnsupportedMediaType) {
            return HttpStatus.UNSUPPORTED_MEDIA_TYPE_415;
        } else if (refusal instanceof PintleException.TooSlow) {
            return HttpStatus.REQUEST_TIMEOUT_408;
        } else if (refusal instanceof PintleException.UpstreamTimedOut) {
            return HttpStatus.GATEWAY_TIMEOUT_504;
        } else if (refusal instanceof PintleException.Unauthorized) {
            return HttpStatus.UNAUTHORIZED_401;
        } else if (refusal instanceof PintleException.InsufficientStorage) {
            return HttpStatus.INSUFFICIENT_STORAGE_507;
        } else if (refusal instanceof PintleException.TooManyRequests) {
            return HttpStatus.TOO_MANY_REQUESTS_429;
        }
        return HttpStatus.BAD_GATEWAY_502;
    }

    private static String title(PintleException refusal, int status) {
        return switch (status) {
            case HttpStatus.FORBIDDEN_403 -> "Access denied";
            case HttpStatus.NOT_FOUND_404 -> "Not found";
            case HttpStatus.BAD_REQUEST_400 -> "Invalid request";
            case HttpStatus.PAYLOAD_TOO_LARGE_413 -> "Content Too Large";
            default -> HttpStatus.getMessage(status);
        };
    }

    /**
     * @param status an HTTP status Jetty or Jersey chose (no reason code of Pintle's)
     * @param detail what went wrong
     * @param instance the request path, or null
     * @return its problem
     */
    public static Problem plain(int status, String detail, String instance) {
        String title = HttpStatus.getMessage(status);
        return new Problem("about:blank", title, status, detail != null ? detail : title, instance, null, null);
    }

    /**
     * Logs an unexpected failure under a new incident id, and records the id for the access log.
     *
     * @param failure what happened
     * @param exchange the request's exchange, or null when it has none
     * @param instance the request path
     * @return the problem to answer: 500 with only the incident id
     */
    public static Problem incident(Throwable failure, Exchange exchange, String instance) {
        String incident = UUID.randomUUID().toString();
        LOG.error("incident {} on {}", incident, instance, failure);
        if (exchange != null) {
            exchange.incident(incident);
        }
        return new Problem("about:blank", "Internal server error", 500, SERVER_ERROR_DETAIL, instance, null, incident);
    }

    /**
     * @param problem a problem
     * @return its JSON
     */
    public static byte[] json(Problem problem) {
        try {
            return JSON.writeValueAsBytes(problem);
        } catch (JsonProcessingException e) {
            return ("{\"status\":" + problem.status() + "}").getBytes(StandardCharsets.US_ASCII);
        }
    }

    /**
     * Answers a refusal on Jetty's side (a 503 or a 429 sends its {@code Retry-After}).
     *
     * @param refusal the refusal
     * @param request the request
     * @param response its response, not committed
     * @param callback completed when the answer is written
     */
    public static void write(PintleException refusal, Request request, Response response, Callback callback) {
        if (refusal instanceof PintleException.Unavailable unavailable) {
            response.getHeaders().put(HttpHeader.RETRY_AFTER, unavailable.retryAfterSeconds());
        } else if (refusal instanceof PintleException.TooManyRequests throttled) {
            response.getHeaders().put(HttpHeader.RETRY_AFTER, throttled.retryAfterSeconds());
        }
        write(of(refusal, request.getHttpURI().getPath()), response, callback);
    }

    /**
     * @param problem what to answer
     * @param response the response, not committed (a committed one is aborted: the client sees a cut response)
     * @param callback completed when the answer is written
     */
    public static void write(Problem problem, Response response, Callback callback) {
        if (response.isCommitted()) {
            callback.failed(new IllegalStateException("response committed before problem " + problem.status()));
            return;
        }
        response.setStatus(problem.status());
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, MediaTypes.PROBLEM_JSON);
        response.write(true, ByteBuffer.wrap(json(problem)), callback);
    }

    /** Keeps client-supplied text short and free of control characters in problem details. */
    public static String printable(String text) {
        String shortened = text.length() > 64 ? text.substring(0, 64) + "..." : text;
        StringBuilder out = new StringBuilder(shortened.length());
        shortened.codePoints().forEach(c -> out.appendCodePoint(Character.isISOControl(c) || c == '"' ? '?' : c));
        return out.toString();
    }
}
