/**
 * The refusals the domain raises toward clients: a small sealed hierarchy of kinds, each with a stable reason code
 * and a detail an operator can act on, and no HTTP status. The problem writer in {@code http} maps each kind to its
 * status and renders it as problem details; anything else becomes a 500 carrying only an incident id.
 */
package io.pintle.server.problem;
