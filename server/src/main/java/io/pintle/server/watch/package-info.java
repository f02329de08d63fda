/**
 * The one watch on the file system: {@link io.pintle.server.watch.DirectoryWatch} owns the process's only
 * {@code WatchService} and the thread that reads it, and tells each client about the directories it registered.
 * Clients (the input watcher of reloads, the change waits of {@code ?wait}) are called on that thread and must
 * hand real work elsewhere. Plain Java: no web stack.
 */
package io.pintle.server.watch;
