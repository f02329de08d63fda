/**
 * The admin listener's resources (this machine only): status, relayd's system API (info, status, reload), health
 * and readiness, metrics, server info. Remote run on this listener is answered by the Jersey application's {@code
 * RemoteRunResource}, which serves both listeners.
 */
package io.pintle.server.http.admin;
