/**
 * The served trees on disk ({@code {share}/{node}}, {@code {share}/common}) and the one way into them:
 * {@link io.pintle.server.policy.SafePaths#resolve}. A file is described by a {@link
 * io.pintle.server.policy.FileVersion} (identity, size, mtime, ETag) taken once, and streamed from the file it
 * described, so a response that started before Rudder's {@code rules.new -> rules} rename completes from the
 * old file. No web stack here.
 */
package io.pintle.server.policy;
