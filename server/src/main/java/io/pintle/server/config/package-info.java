/**
 * The configuration file: one TOML file parsed once into the immutable {@link
 * io.pintle.server.config.ServerConfig} record tree. Defaults are Rudder's paths, so a Rudder server needs no
 * file at all; unknown keys are rejected; every error names the file and the key. Relative paths are relative
 * to the configuration file's directory.
 */
package io.pintle.server.config;
