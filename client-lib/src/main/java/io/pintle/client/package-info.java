/**
 * Java client for Pintle servers: mutual TLS with the node's Rudder key and certificate, the server's public key
 * pinned like {@code curl --pinnedpubkey}, conditional downloads with ETags, and directory sync
 * ({@link io.pintle.client.DirectorySync}: a manifest, only the files that differ, verified, swapped in
 * atomically). Server errors surface as {@link io.pintle.client.ProblemException} carrying the server's problem
 * details.
 */
package io.pintle.client;
