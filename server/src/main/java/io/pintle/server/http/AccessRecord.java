package io.pintle.server.http;

import io.pintle.server.acl.Caller;
import io.pintle.server.acl.Decision;
import jakarta.ws.rs.container.ContainerRequestContext;
import org.eclipse.jetty.server.Request;

/**
 * What one request learned about itself as it ran, for the access log and the metrics: the caller (from {@link
 * PeerIdentityFilter}), the access decision (from the resource) and the incident id of a server error. It lives
 * as an attribute of the Jetty request, which {@link RequestObserver} reads once the response is complete; a
 * request Jersey never saw (refused by Jetty) simply has none. Written by the request's thread, read after it
 * completes: the fields are volatile so the reader needs nothing more.
 */
final class AccessRecord {
    static final String ATTRIBUTE = AccessRecord.class.getName();

    private volatile Caller caller;
    private volatile Decision decision;
    private volatile String incident;

    /**
     * @param request a Jetty request
     * @return its record, created on first use
     */
    static AccessRecord of(Request request) {
        if (request.getAttribute(ATTRIBUTE) instanceof AccessRecord record) {
            return record;
        }
        AccessRecord record = new AccessRecord();
        request.setAttribute(ATTRIBUTE, record);
        return record;
    }

    /**
     * @param request a Jetty request
     * @return its record, or null when nothing was recorded
     */
    static AccessRecord find(Request request) {
        return request.getAttribute(ATTRIBUTE) instanceof AccessRecord record ? record : null;
    }

    /**
     * @param context a Jersey request that went through {@link PeerIdentityFilter}
     * @return its record
     */
    static AccessRecord of(ContainerRequestContext context) {
        if (context.getProperty(ATTRIBUTE) instanceof AccessRecord record) {
            return record;
        }
        throw new IllegalStateException("PeerIdentityFilter did not run for " + context.getUriInfo().getPath());
    }

    void caller(Caller value) {
        caller = value;
    }

    void decision(Decision value) {
        decision = value;
    }

    void incident(String value) {
        incident = value;
    }

    /** @return the caller, or null before identification (admin listener, Jetty-level rejections) */
    Caller caller() {
        return caller;
    }

    /** @return the access decision, or null for routes without one */
    Decision decision() {
        return decision;
    }

    /** @return the incident id of a server error, or null */
    String incident() {
        return incident;
    }
}
