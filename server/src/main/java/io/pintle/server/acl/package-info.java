/**
 * Who may read what. Pure decisions over immutable inputs: allowed networks (Rudder's Apache
 * {@code Require ip} files) and the caller's identification. Default deny: every decision names the rule that
 * allowed it or the reason it denied. No web stack, no I/O beyond reading the networks file.
 */
package io.pintle.server.acl;
