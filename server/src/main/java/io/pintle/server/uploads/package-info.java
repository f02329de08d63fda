/**
 * Agents' uploads, as Rudder's Apache takes them by WebDAV {@code PUT}: inventories of new nodes
 * ({@code /inventories/}), inventories of accepted nodes ({@code /inventory-updates/}) and run reports
 * ({@code /reports/}), each into the directory relayd watches. Plain Java: the HTTP layer authenticates the caller
 * ({@link io.pintle.server.uploads.Htpasswd}) and hands the body to {@link io.pintle.server.uploads.UploadStore}.
 * Invariant: a file appears under its final name complete and fsync'd, by one rename, or not at all; what relayd's
 * {@code CLOSE_WRITE|MOVED_TO} watch sees is only ever a whole upload. Password checks cost the same for any user
 * name, and an address whose logins keep failing is refused for a while ({@link
 * io.pintle.server.uploads.LoginThrottle}, bounded, one per server). {@link
 * io.pintle.server.uploads.UploadSignatures} checks a report's S/MIME signature or an inventory's sign file against
 * the node's pinned keys, as relayd and Rudder's webapp do, with bounded memory.
 */
package io.pintle.server.uploads;
