/**
 * The errors the domain raises toward clients: a small sealed hierarchy, each with an HTTP status, a stable reason
 * code and a detail an operator can act on. One mapper in {@code http} renders them as problem details; anything
 * else becomes a 500 carrying only an incident id.
 */
package io.pintle.server.problem;
