/**
 * The server's reloadable state: one immutable {@link io.pintle.server.reload.ServerSnapshot} behind the one
 * {@code AtomicReference} in {@link io.pintle.server.reload.SnapshotHolder}. A snapshot is built whole from the
 * input files by {@link io.pintle.server.reload.SnapshotLoader} and published only once valid; a failed build
 * never replaces a good snapshot. Readers call {@code current()} once per request and never block.
 */
package io.pintle.server.reload;
