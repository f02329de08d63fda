/**
 * {@code pintle demo}: a self-contained Rudder-like server layout (keys, certificates, nodes list, policy trees
 * and archives) in a directory, and the curl command lines that exercise it the way Rudder agents do.
 */
package io.pintle.server.demo;
