package io.pintle.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.pintle.api.Routes;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code pintle reload}: asks the running server to reload, through its admin listener, and waits for the outcome.
 * Suitable as systemd {@code ExecReload}: exit 0 once the new snapshot is live (or nothing changed), 1 when the
 * server refused the new inputs (it keeps serving the previous ones), 3 when the server cannot be reached.
 */
@Command(name = "reload", mixinStandardHelpOptions = true,
        description = "Reload a running server's configuration and input files; exit 0 once live, 1 if refused.")
public final class ReloadCommand implements Callable<Integer> {
    /** Longer than the server's own reload timeout, so the server's answer always arrives first. */
    static final Duration TIMEOUT = Duration.ofSeconds(90);


    @Mixin
    ConfigOption config = new ConfigOption();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        AdminCall.Answer answer;
        try {
            answer = AdminCall.call(config, "POST", Routes.RELAY_API + "/system/reload", null, TIMEOUT);
        } catch (AdminCall.Failed failed) {
            // An answer that is not JSON is a refusal of sorts; the rest keep their exit codes.
            return AdminCall.failed(err, "reload", failed);
        }
        JsonNode body = answer.body();
        if ("success".equals(body.path("result").asText())) {
            // The body is relayd's exact string (rudder relay reload compares it); Pintle's details are headers.
            out.println("reloaded: generation " + answer.headers().firstValue(Routes.RELOAD_GENERATION_HEADER)
                    .orElse("?") + " (" + answer.headers().firstValue(Routes.RELOAD_OUTCOME_HEADER)
                    .orElse("?") + ")");
            return ExitCodes.OK;
        }
        err.println("pintle reload: refused, previous configuration still serving: "
                + body.path("errorDetails").asText("HTTP " + answer.status()));
        return ExitCodes.RELOAD_FAILED;
    }
}
