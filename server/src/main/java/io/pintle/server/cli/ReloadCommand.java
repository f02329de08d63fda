package io.pintle.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.Routes;
import io.pintle.server.config.ConfigException;
import io.pintle.server.config.ServerConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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

    private static final ObjectMapper JSON = new ObjectMapper();

    @Mixin
    ConfigOption config = new ConfigOption();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ServerConfig loaded;
        try {
            loaded = config.load();
        } catch (ConfigException e) {
            err.println("pintle reload: configuration error: " + e.getMessage());
            return ExitCodes.CONFIG_ERROR;
        }
        ServerConfig.Listen admin = loaded.admin().listen();
        if (admin.port() == 0) {
            err.println("pintle reload: 'admin.listen' has port 0 (any free port): give it a fixed port to use this "
                    + "command, or POST to the port the server logged at start");
            return ExitCodes.CONFIG_ERROR;
        }
        URI uri = URI.create("http://" + admin + Routes.RELAY_API + "/system/reload");
        HttpResponse<String> response;
        try {
            response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build().send(
                    HttpRequest.newBuilder(uri).timeout(TIMEOUT).POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            err.println("pintle reload: cannot reach the server at " + uri + " (is it running?): " + e);
            return ExitCodes.STARTUP_FAILURE;
        }
        JsonNode body;
        try {
            body = JSON.readTree(response.body());
        } catch (IOException e) {
            err.println("pintle reload: unexpected answer " + response.statusCode() + " from " + uri);
            return ExitCodes.RELOAD_FAILED;
        }
        if ("success".equals(body.path("result").asText())) {
            // The body is relayd's exact string (rudder relay reload compares it); Pintle's details are headers.
            out.println("reloaded: generation " + response.headers().firstValue(Routes.RELOAD_GENERATION_HEADER)
                    .orElse("?") + " (" + response.headers().firstValue(Routes.RELOAD_OUTCOME_HEADER)
                    .orElse("?") + ")");
            return ExitCodes.OK;
        }
        err.println("pintle reload: refused, previous configuration still serving: "
                + body.path("errorDetails").asText("HTTP " + response.statusCode()));
        return ExitCodes.RELOAD_FAILED;
    }
}
