/**
 * Logging helpers below both the HTTP layer and the command line: {@link io.pintle.server.logging.WholeLines}, by
 * which the access log's line skips Logback's per-event work when the configuration allows it.
 */
package io.pintle.server.logging;
