/**
 * The Jersey applications and the adapter that runs them on Jetty's core API on a worker ({@code JerseyHandler}):
 * the node-facing resources (inventory and report uploads, shared-file uploads, remote run, relayd's API under its
 * unversioned alias) and, built here too, the admin application from {@code http.admin}'s resources. Every
 * resource asks {@link io.pintle.server.access.Access#decide} through the request's exchange; problems are written
 * by {@code ProblemExceptionMapper}.
 */
package io.pintle.server.http.jersey;
