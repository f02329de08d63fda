package io.pintle.server.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pintle.api.Routes;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code pintle freeze} and {@code pintle freeze --release}: holds nodes on the policies of this moment (or, with
 * {@code --rollback}, on their previous generation) through the running server's {@code /v1/freeze}, and lets
 * them go. What Rudder's {@code rudder server disable-policy-distribution} does for cf-serverd, for both doors.
 */
@Command(name = "freeze", mixinStandardHelpOptions = true,
        description = "Hold nodes (all, or those named) on their current policies, or release them.")
public final class FreezeCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Mixin
    ConfigOption config = new ConfigOption();

    @Option(names = "--rollback", description = "Hold them on their previous generation (Rudder's backup).")
    boolean rollback;

    @Option(names = "--reason", description = "A note kept with the freeze and shown in the status.")
    String reason;

    @Option(names = "--release", description = "Release the freeze (the nodes named, or all).")
    boolean release;

    @Option(names = "--status", description = "Only say what is frozen.")
    boolean status;

    @Parameters(arity = "0..*", paramLabel = "NODE", description = "Nodes; none means every node.")
    List<String> nodes = new ArrayList<>();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        AdminCall.Answer answer;
        try {
            if (status) {
                answer = AdminCall.call(config, "GET", Routes.FREEZE, null, Duration.ofSeconds(30));
            } else if (release) {
                StringBuilder path = new StringBuilder(Routes.FREEZE);
                char separator = '?';
                for (String node : nodes) {
                    path.append(separator).append("node=").append(URLEncoder.encode(node, StandardCharsets.UTF_8));
                    separator = '&';
                }
                answer = AdminCall.call(config, "DELETE", path.toString(), null, Duration.ofSeconds(60));
            } else {
                ObjectNode body = JSON.createObjectNode();
                nodes.forEach(body.putArray("nodes")::add);
                body.put("rollback", rollback);
                if (reason != null) {
                    body.put("reason", reason);
                }
                // A freeze of every node copies every node's directory: minutes on a large fleet.
                answer = AdminCall.call(config, "POST", Routes.FREEZE, body.toString(), Duration.ofMinutes(30));
            }
        } catch (AdminCall.Failed failed) {
            return AdminCall.failed(err, "freeze", failed);
        }
        if (!answer.ok()) {
            err.println("pintle freeze: " + answer.refusal());
            return ExitCodes.EXPLAIN_REFUSED;
        }
        var state = answer.body();
        if (!state.path("active").asBoolean()) {
            out.println("nothing frozen");
        } else {
            out.println((state.path("all").asBoolean() ? "every node" : state.path("nodes").size() + " node(s)")
                    + " frozen" + (state.path("rollback").asBoolean() ? " on their previous generation" : "")
                    + " since " + state.path("since").asText() + " (freeze " + state.path("id").asText() + ")"
                    + (state.hasNonNull("reason") ? ": " + state.path("reason").asText() : ""));
        }
        return ExitCodes.OK;
    }
}
