/**
 * Node-to-node shared files, relayd-compatible: a node uploads a file signed with its agent key for another node
 * ({@code PUT shared-files/{target}/{source}/{fileId}}); the target checks it ({@code HEAD ?hash=}) and, new with
 * Pintle, downloads it over HTTPS ({@code GET}, only with the target's own certificate). Plain Java: the HTTP
 * layer calls {@link io.pintle.server.sharedfiles.SharedFileStore}. Invariants: a file and its metadata are
 * published by one upload and read as a pair whose hashes match, never one upload's bytes with another's
 * metadata; every name derived from a valid id fits a file name, and none is another id's metadata or a
 * temporary name.
 */
package io.pintle.server.sharedfiles;
