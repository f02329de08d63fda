package io.pintle.server.remoterun;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LineSplitterTest {
    private final List<String> lines = new ArrayList<>();
    private final LineSplitter splitter = new LineSplitter(lines::add);

    @Test
    void aLineSplitAtItsLimitNeverCutsACharacter() {
        // "é" is two bytes: the limit falls between them when one ASCII byte comes first.
        String text = "a" + "é".repeat(AgentLauncher.MAX_LINE_BYTES);
        splitter.feed(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
        splitter.finish();

        assertThat(String.join("", lines)).isEqualTo(text);
        assertThat(lines).allSatisfy(line -> assertThat(line).doesNotContain("\uFFFD"));
        assertThat(lines.get(0).getBytes(StandardCharsets.UTF_8)).hasSize(AgentLauncher.MAX_LINE_BYTES - 1);
    }

    @Test
    void crIsDroppedOnlyWhereTheLineEnds() {
        String split = "a".repeat(AgentLauncher.MAX_LINE_BYTES - 1) + "\r";
        splitter.feed(ByteBuffer.wrap(("one\r\n" + split + "b\n").getBytes(StandardCharsets.US_ASCII)));
        splitter.finish();

        assertThat(lines).containsExactly("one", split, "b");
    }
}
