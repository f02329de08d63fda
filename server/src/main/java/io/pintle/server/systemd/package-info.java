/**
 * What systemd hands the process, and what the process tells systemd back: the listening socket of a socket unit
 * (inherited on standard input) and the {@code sd_notify} readiness protocol. Every piece is optional: without
 * systemd the server binds its own port and notifies nobody, and a failed notification never stops the server.
 */
package io.pintle.server.systemd;
