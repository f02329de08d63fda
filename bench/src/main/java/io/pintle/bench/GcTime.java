package io.pintle.bench;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

/**
 * Time the JVM's collectors report, to tell a slow step from one that a collection interrupted. With G1 on JDK 17 the
 * two beans ("G1 Young Generation", "G1 Old Generation") count stop-the-world pauses, in milliseconds; concurrent
 * marking runs beside the application and is not counted.
 */
final class GcTime {
    private GcTime() {}

    /** @return the collectors' accumulated time since the JVM started, in milliseconds */
    static long millis() {
        long total = 0;
        for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, collector.getCollectionTime());
        }
        return total;
    }
}
