package io.pintle.server.http.jersey;

import io.pintle.server.http.Problems;
import io.pintle.api.MediaTypes;
import io.pintle.api.dto.Problem;
import io.pintle.server.policy.FileVersion;
import io.pintle.server.problem.PintleException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import jakarta.ws.rs.ext.ExceptionMapper;
import org.eclipse.jetty.io.EofException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one error pipeline: every exception becomes {@code application/problem+json}. Domain errors keep their
 * status, reason and detail; JAX-RS errors (unknown route, wrong method) keep their status; anything else is a
 * 500 whose body carries only an incident id, logged with the stack trace.
 */
final class ProblemExceptionMapper implements ExceptionMapper<Throwable> {
    private static final Logger LOG = LoggerFactory.getLogger(ProblemExceptionMapper.class);

    // Request-scoped proxy; the mapper itself is a singleton.
    @Context
    private UriInfo uriInfo;


    @Override
    public Response toResponse(Throwable exception) {
        String instance = "/" + uriInfo.getPath(false);
        if (exception instanceof PintleException.Unavailable unavailable) {
            return Response.fromResponse(problem(Problems.of(unavailable, instance), null))
                    .header("Retry-After", unavailable.retryAfterSeconds())
                    .build();
        }
        if (exception instanceof PintleException.TooManyRequests throttled) {
            return Response.fromResponse(problem(Problems.of(throttled, instance), null))
                    .header("Retry-After", throttled.retryAfterSeconds())
                    .build();
        }
        if (exception instanceof PintleException.Unauthorized unauthorized) {
            return Response.fromResponse(problem(Problems.of(unauthorized, instance), null))
                    .header("WWW-Authenticate", unauthorized.challenge())
                    .build();
        }
        if (exception instanceof PintleException pintle) {
            return problem(Problems.of(pintle, instance), null);
        }
        if (exception instanceof WebApplicationException web && web.getResponse().getStatus() < 500) {
            Response original = web.getResponse();
            Response.StatusType status = original.getStatusInfo();
            String detail = switch (status.getStatusCode()) {
                case 404 -> "no such route";
                case 405 -> "method not allowed on this route";
                case 406 -> "no acceptable representation";
                case 415 -> "unsupported media type";
                default -> status.getReasonPhrase();
            };
            return problem(Problems.plain(status.getStatusCode(), detail, instance), original);
        }
        for (Throwable cause = exception; cause != null; cause = cause.getCause()) {
            if (cause instanceof EofException) {
                // The client closed the connection mid-response (curl --fail does on every 4xx): nothing to answer.
                LOG.debug("client went away during {}: {}", instance, cause.toString());
                return Response.status(500).build();
            }
            if (cause instanceof FileVersion.FileChangedException changed) {
                // The file was replaced between describing it and opening it (a rename racing the request). If
                // nothing was sent yet the client gets a 503 to retry at once; if the headers already went out,
                // the response is aborted, which makes the client retry too.
                LOG.warn("aborted {}: {}", instance, changed.getMessage());
                return Response.fromResponse(problem(Problems.of(new PintleException.Unavailable("file-changed",
                        "the file was replaced while it was being served; retry", 1), instance), null))
                        .header("Retry-After", "1")
                        .build();
            }
        }
        // ExchangeFilter copies the incident id into the request's exchange, for its access log line.
        return problem(Problems.incident(exception, null, instance), null);
    }

    private static Response problem(Problem problem, Response original) {
        Response.ResponseBuilder builder = Response.status(problem.status())
                .type(MediaTypes.PROBLEM_JSON)
                .entity(problem);
        if (original != null && original.getHeaderString("Allow") != null) {
            builder.header("Allow", original.getHeaderString("Allow"));
        }
        return builder.build();
    }
}
