/**
 * The served trees on disk ({@code {share}/{node}}, {@code {share}/common}) and the one way into them:
 * {@link io.pintle.server.policy.SafePaths#resolve}. A file is described by a {@link
 * io.pintle.server.policy.FileVersion} (identity, size, mtime, ETag) taken once, and streamed from the file it
 * described, so a response that started before Rudder's {@code rules.new -> rules} rename completes from the
 * old file. A tree's manifest or archive is written as {@link io.pintle.server.policy.TreeScanner} walks it,
 * never held whole, and is cut rather than finished when the tree is no longer the version its ETag names. No
 * web stack here.
 */
package io.pintle.server.policy;
