package io.pintle.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.pintle.api.Routes;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code pintle nodes}: who has what, from the running server ({@code GET /v1/nodes} on its admin listener): one
 * line per served node, whether it is behind, silent or frozen, what it last fetched and when it was last heard
 * from; {@code pintle nodes <id> --diff} says what changed for one node since its last fetch.
 */
@Command(name = "nodes", mixinStandardHelpOptions = true,
        description = "List the nodes this server serves and whether each holds its current policies.")
public final class NodesCommand implements Callable<Integer> {
    @Mixin
    ConfigOption config = new ConfigOption();

    @Option(names = "--behind", description = "Only nodes that do not hold the policies served to them now.")
    boolean behind;

    @Option(names = "--silent-for", paramLabel = "SECONDS",
            description = "Only nodes with no request for at least this many seconds (and those never seen).")
    Long silentFor;

    @Option(names = "--json", description = "Print the server's JSON answer as it is.")
    boolean json;

    @Option(names = "--diff", description = "With a node id: what changed in its policies since it last fetched them.")
    boolean diff;

    @Parameters(arity = "0..1", paramLabel = "NODE", description = "One node's state (or its diff with --diff).")
    String node;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (diff && node == null) {
            err.println("pintle nodes: --diff needs a node id");
            return ExitCodes.CONFIG_ERROR;
        }
        String path = node == null ? list() : Routes.NODES + "/" + node + (diff ? "/diff" : "");
        AdminCall.Answer answer;
        try {
            answer = AdminCall.call(config, "GET", path, null, Duration.ofSeconds(60));
        } catch (AdminCall.Failed failed) {
            return AdminCall.failed(err, "nodes", failed);
        }
        if (!answer.ok()) {
            err.println("pintle nodes: " + answer.refusal());
            return ExitCodes.EXPLAIN_REFUSED;
        }
        if (json || node != null && !diff) {
            out.println(answer.body().toPrettyString());
        } else if (diff) {
            printDiff(out, answer.body());
        } else {
            printList(out, answer.body());
        }
        return ExitCodes.OK;
    }

    private String list() {
        StringBuilder path = new StringBuilder(Routes.NODES);
        char separator = '?';
        if (behind) {
            path.append(separator).append(Routes.BEHIND).append("=true");
            separator = '&';
        }
        if (silentFor != null) {
            path.append(separator).append(Routes.SILENT_FOR).append('=').append(silentFor);
        }
        return path.toString();
    }

    private static void printList(PrintWriter out, JsonNode body) {
        out.printf("%-38s %-30s %-7s %-7s %-7s %-25s %s%n", "NODE", "HOSTNAME", "BEHIND", "SILENT", "FROZEN",
                "LAST FETCH", "LAST REQUEST");
        for (JsonNode node : body.path("nodes")) {
            out.printf("%-38s %-30s %-7s %-7s %-7s %-25s %s%n", node.path("id").asText(),
                    node.path("hostname").asText(), yes(node, "behind"), yes(node, "silent"), yes(node, "frozen"),
                    node.path("policies").path("time").asText("never"),
                    node.path("last_request").path("time").asText("never"));
        }
        out.printf("%d of %d served node(s) shown; %d behind; %.1f %% on what is served now%n",
                body.path("nodes").size(), body.path("total").asInt(), body.path("behind").asInt(),
                body.path("current_share").asDouble() * 100);
    }

    private static void printDiff(PrintWriter out, JsonNode body) {
        out.println("node " + body.path("node").asText() + ": fetched " + body.path("fetched_etag").asText("nothing")
                + ", served now " + body.path("current_etag").asText("nothing")
                + (body.path("behind").asBoolean() ? " (behind)" : " (current)"));
        if (body.hasNonNull("note")) {
            out.println("note: " + body.path("note").asText());
        }
        body.path("added").forEach(path -> out.println("added   " + path.asText()));
        body.path("removed").forEach(path -> out.println("removed " + path.asText()));
        for (JsonNode change : body.path("changed")) {
            out.println("changed " + change.path("path").asText() + (change.path("binary").asBoolean() ? " (binary)"
                    : change.path("truncated").asBoolean() ? " (diff left out: too large)" : ""));
            if (change.hasNonNull("diff")) {
                out.print(change.path("diff").asText());
            }
        }
        out.println(body.path("unchanged").asInt() + " file(s) unchanged");
    }

    private static String yes(JsonNode node, String field) {
        return node.path(field).asBoolean() ? "yes" : "no";
    }
}
