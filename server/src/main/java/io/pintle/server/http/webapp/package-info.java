/**
 * The reverse proxy to Rudder's webapp ({@code [webapp] proxy}): {@code /rudder/...} as Rudder's vhost proxies it,
 * relayd's API excepted, {@code /} redirected to {@code /rudder}.
 */
package io.pintle.server.http.webapp;
