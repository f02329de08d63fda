/**
 * Node-to-node shared files, relayd-compatible: a node uploads a file signed with its agent key for another node
 * ({@code PUT shared-files/{target}/{source}/{fileId}}); the target checks it ({@code HEAD ?hash=}) and, new with
 * Pintle, downloads it over HTTPS ({@code GET}, only with the target's own certificate). Plain Java: the HTTP
 * layer calls {@link io.pintle.server.sharedfiles.SharedFileStore}.
 */
package io.pintle.server.sharedfiles;
