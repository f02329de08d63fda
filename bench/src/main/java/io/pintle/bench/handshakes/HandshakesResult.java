package io.pintle.bench.handshakes;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/** Everything a run measured and checked, filled in as it goes; read by the report and the plot. */
final class HandshakesResult {
    final HandshakesOptions options;
    final Instant started;
    Instant finished;
    String opensslVersion = "?";
    String serverCommand = "?";
    final Map<Mode, String> configs = new EnumMap<>(Mode.class);
    final Map<Mode, String> configFiles = new EnumMap<>(Mode.class);
    final Map<Mode, String> generatorCommands = new EnumMap<>(Mode.class);
    final List<String> checks = new ArrayList<>();
    final List<Window> windows = new ArrayList<>();
    final Map<Mode, Hotspots> profiles = new EnumMap<>(Mode.class);
    VerificationCosts costs;
    int serverLogErrors;

    HandshakesResult(HandshakesOptions options, Instant started) {
        this.options = options;
        this.started = started;
    }

    /** @return whether every window was clean and the servers logged no error */
    boolean clean() {
        return serverLogErrors == 0 && windows.stream().allMatch(w -> w.clean(options.parallel()));
    }
}
