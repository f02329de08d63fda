/**
 * Plots shared by the harnesses that put Pintle next to another server ({@code bench/perf}, {@code bench/uploads}):
 * drawn with Java2D, headless, so that no plotting tool is needed on the machine.
 */
package io.pintle.bench.plot;
