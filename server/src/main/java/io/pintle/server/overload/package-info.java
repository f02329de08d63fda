/**
 * Overload control, in plain Java: the classes of work that are limited ({@link
 * io.pintle.server.overload.WorkClass}), the admission gate of each (a fixed number of workers and a bounded
 * queue, one short lock that no caller ever waits under), the per-address and per-node shares ({@link
 * io.pintle.server.overload.PerKey}) and the randomised {@code Retry-After} of a refusal. The HTTP layer applies them; a request past the limits gets a 503 at once, never a
 * reset or a hang.
 */
package io.pintle.server.overload;
