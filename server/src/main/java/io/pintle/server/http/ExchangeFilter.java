package io.pintle.server.http;

import io.pintle.api.dto.Problem;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.inject.Provider;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.container.PreMatching;
import org.eclipse.jetty.server.Request;

/**
 * Jersey's side of the {@link Exchange}: puts the request's exchange, made by {@link ExchangeHandler} before Jersey
 * was reached, into the Jersey request's properties (where resources read it with {@link
 * Exchange#of(ContainerRequestContext)}), and gives the incident id of a server error answered by {@link
 * ProblemExceptionMapper} back to the exchange, for the access log line.
 */
@PreMatching
@Priority(Priorities.AUTHENTICATION)
final class ExchangeFilter implements ContainerRequestFilter, ContainerResponseFilter {
    // The Jetty request is request-scoped; Jersey's jetty-http container only offers it through injection.
    @Inject
    private Provider<Request> jettyRequest;

    @Override
    public void filter(ContainerRequestContext context) {
        context.setProperty(Exchange.ATTRIBUTE, Exchange.of(jettyRequest.get()));
    }

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        if (response.getEntity() instanceof Problem problem && problem.incident() != null
                && request.getProperty(Exchange.ATTRIBUTE) instanceof Exchange exchange) {
            exchange.incident(problem.incident());
        }
    }
}
