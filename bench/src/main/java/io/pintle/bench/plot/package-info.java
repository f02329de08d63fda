/**
 * Plots shared by the harnesses that put Pintle next to another server ({@code bench/perf}, {@code bench/uploads}):
 * drawn with Java2D, headless, so that no plotting tool is needed on the machine. {@link io.pintle.bench.plot.Canvas}
 * is the frame (white image, title, PNG) that every harness's plot shares, {@link io.pintle.bench.plot.Axes} the
 * value axis of their line and bar plots.
 */
package io.pintle.bench.plot;
