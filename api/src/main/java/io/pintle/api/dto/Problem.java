package io.pintle.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * An RFC 9457 problem details object, the body of every error response ({@code application/problem+json}).
 *
 * @param type a URI naming the kind of problem ({@code about:blank} for plain HTTP errors)
 * @param title a short, fixed summary of the kind of problem
 * @param status the HTTP status code
 * @param detail what went wrong for this request, in words an operator can act on
 * @param instance the request path
 * @param reason a stable machine-readable code for the cause (for example {@code uid-mismatch}), or null
 * @param incident for server errors only: an id to look up in the server log, or null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(
        String type, String title, int status, String detail, String instance, String reason, String incident) {}
