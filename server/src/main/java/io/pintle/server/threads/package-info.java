/**
 * Where background work runs. {@link io.pintle.server.threads.Threads}, made once by {@code Bootstrap}, owns the
 * server's one scheduler (timers only: its tasks are short and never block) and one worker pool (blocking work);
 * components are handed them and never make threads of their own. A component's pending timers are a {@link
 * io.pintle.server.threads.Timers}, cancelled together at its close; its work a {@link
 * io.pintle.server.threads.Lane}, which keeps order (one task at a time) or a bound where the component needs one.
 */
package io.pintle.server.threads;
