package io.pintle.bench;

import java.util.Optional;

/**
 * One line of the table.
 *
 * @param scenario what was measured
 * @param pintle the result against Pintle
 * @param baseline the result against the plain Jetty baseline, for rows that have one
 */
record Row(Scenario scenario, Measurement pintle, Optional<Measurement> baseline) {
    /** @return Pintle's throughput over the baseline's, if there is a baseline */
    Optional<Double> ratio() {
        Kind.Unit unit = scenario.kind().unit();
        return baseline.filter(b -> b.throughput(unit) > 0)
                .map(b -> pintle.throughput(unit) / b.throughput(unit));
    }

    /** @return errors on both servers */
    long errors() {
        return pintle.errors() + baseline.map(Measurement::errors).orElse(0L);
    }
}
