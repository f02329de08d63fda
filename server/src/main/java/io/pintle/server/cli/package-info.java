/**
 * The {@code pintle} sub-commands. Each parses its options, calls into the server's packages and returns an exit
 * code from {@link io.pintle.server.cli.ExitCodes}; none holds state beyond one invocation.
 */
package io.pintle.server.cli;
