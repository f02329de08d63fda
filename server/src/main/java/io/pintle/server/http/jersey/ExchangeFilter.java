package io.pintle.server.http.jersey;

import io.pintle.server.http.Exchange;
import io.pintle.api.dto.Problem;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;

/**
 * Gives the incident id of a server error answered by {@link ProblemExceptionMapper} back to the request's {@link
 * Exchange} (which {@link JerseyHandler} put in the Jersey request's properties), for the access log line.
 */
final class ExchangeFilter implements ContainerResponseFilter {
    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        if (response.getEntity() instanceof Problem problem && problem.incident() != null
                && request.getProperty(Exchange.ATTRIBUTE) instanceof Exchange exchange) {
            exchange.incident(problem.incident());
        }
    }
}
