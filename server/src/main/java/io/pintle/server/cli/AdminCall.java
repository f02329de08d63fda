package io.pintle.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.server.config.ConfigException;
import io.pintle.server.config.ServerConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * One call to a running server's admin listener, as the commands that read or steer it make it: the listener from
 * the configuration, a JSON answer, and a problem's detail printed as the refusal.
 */
final class AdminCall {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The answer.
     *
     * @param status HTTP status
     * @param body its JSON
     * @param headers its headers
     */
    record Answer(int status, JsonNode body, java.net.http.HttpHeaders headers) {
        boolean ok() {
            return status / 100 == 2;
        }

        /** @return a problem's detail, or the status */
        String refusal() {
            return body.path("detail").asText("HTTP " + status) + (body.has("reason") ? " (" + body.path("reason")
                    .asText() + ")" : "");
        }
    }

    /** Why a call could not be made, and the exit code it means. */
    static final class Failed extends Exception {
        private static final long serialVersionUID = 1L;
        private final int exit;

        Failed(String message, int exit) {
            super(message);
            this.exit = exit;
        }

        int exit() {
            return exit;
        }
    }

    private AdminCall() {}

    /**
     * @param config where the configuration is
     * @param method the HTTP method
     * @param path the path and query
     * @param json the body, or null
     * @param timeout how long to wait for the answer
     * @return the answer
     * @throws Failed when the configuration is bad or the server cannot be reached or answers no JSON
     */
    static Answer call(ConfigOption config, String method, String path, String json, Duration timeout)
            throws Failed, InterruptedException {
        ServerConfig loaded;
        try {
            loaded = config.load();
        } catch (ConfigException e) {
            throw new Failed("configuration error: " + e.getMessage(), ExitCodes.CONFIG_ERROR);
        }
        ServerConfig.Listen admin = loaded.admin().listen();
        if (admin.port() == 0) {
            throw new Failed("'admin.listen' has port 0 (any free port): give it a fixed port to use this command",
                    ExitCodes.CONFIG_ERROR);
        }
        URI uri = URI.create("http://" + admin + path);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(timeout)
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            request.header("Content-Type", "application/json");
        }
        HttpResponse<String> response;
        try {
            response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
                    .send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new Failed("cannot reach the server at " + uri + " (is it running?): " + e,
                    ExitCodes.STARTUP_FAILURE);
        }
        try {
            return new Answer(response.statusCode(), JSON.readTree(response.body()), response.headers());
        } catch (IOException e) {
            throw new Failed("unexpected answer " + response.statusCode() + " from " + uri, ExitCodes.STARTUP_FAILURE);
        }
    }

    /** Prints a failure the way every command does, and gives its exit code. */
    static int failed(PrintWriter err, String command, Failed failed) {
        err.println("pintle " + command + ": " + failed.getMessage());
        return failed.exit();
    }
}
