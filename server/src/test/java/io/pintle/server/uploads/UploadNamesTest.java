package io.pintle.server.uploads;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.nodes.NodeId;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UploadNamesTest {
    private static final String UUID = "0e2d8f4c-5b7a-4f5e-9a59-3c4d5e6f7a8b";

    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "-", value = {
        // Reports: <date>@<node>.log.gz (report.sh), <node>_<date>.log.gz.
        "2026-12-03T10:00:00+00:00@node-1.log.gz | node-1",
        "2026-12-03T10:00:00+00:00@" + UUID + ".log | " + UUID,
        "node-1_2026-12-03T10:00:00+00:00.log.gz | node-1",
        // Inventories: <node>_<date>.ocs[.gz|.sign] (do-inventory), <hostname>-<uuid>.ocs.gz.
        "node-2_2026-12-03T10:00:00+00:00.ocs.gz | node-2",
        "node-2_2026-12-03T10:00:00+00:00.ocs.sign | node-2",
        "node-2_2026-12-03T10:00:00+00:00.ocs | node-2",
        "web-01.example.org-" + UUID + ".ocs.gz | " + UUID,
        "web_01-" + UUID + ".ocs.sign | " + UUID,
        // Names that name no node.
        "inventory.xml | -",
        "report.log.gz | -",
        "x@../etc.log | -",
        "x@no.dots.allowed.log.gz | -",
        "web-01.ocs.gz | -",
        "node-1_2026.txt | -",
    })
    void anUploadIsForTheNodeItsNameNames(String name, String node) {
        assertThat(UploadNames.node(name)).isEqualTo(node == null ? null : new NodeId(node));
    }
}
