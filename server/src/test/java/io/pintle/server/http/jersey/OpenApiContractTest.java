package io.pintle.server.http.jersey;

import io.pintle.server.http.jersey.JerseyConfig;
import io.pintle.server.access.Route;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.pintle.api.dto.SystemInfo;
import io.pintle.api.dto.SystemStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.glassfish.jersey.model.Parameter;
import org.glassfish.jersey.server.model.Resource;
import org.glassfish.jersey.server.model.ResourceMethod;
import org.junit.jupiter.api.Test;

/**
 * {@code openapi.yaml} must list exactly the routes the server has: every (method, path) the file pipeline answers
 * (declared in the {@link Route} table), the webapp's proxied prefix with the methods the table lists, and every one of the Jersey resources registered by {@link JerseyConfig}
 * on both listeners, plus HEAD wherever Jersey has GET (Jersey answers HEAD from GET).
 */
class OpenApiContractTest {
    private static final Set<String> HTTP_METHODS =
            Set.of("get", "put", "post", "delete", "options", "head", "patch", "trace");
    private static final Pattern TEMPLATE = Pattern.compile("\\{[^}/]*(?:\\{[^}]*\\}[^}/]*)*\\}");

    @Test
    void specListsExactlyTheServersRoutes() throws Exception {
        assertThat(specOperations()).isEqualTo(serverOperations());
    }

    @Test
    void serverRoutesAreFoundAtAll() {
        // Guards the comparison above against an empty model on both sides.
        assertThat(serverOperations()).contains("GET /policies/{}/{}", "HEAD /common/{}", "GET /v1/whoami",
                "POST /rudder/relay-api/1/system/reload", "GET /v1/status", "GET /metrics", "GET /health", "GET /ready");
    }

    /**
     * Query parameters too: every query parameter a route reads ({@code @QueryParam} of a Jersey resource, or
     * listed in the {@link Route} table for the file pipeline) is in the spec for that operation and the other way
     * round.
     */
    @Test
    void specListsExactlyTheQueryParametersOfEachRoute() throws Exception {
        Map<String, Set<String>> server = new TreeMap<>();
        for (Route route : Route.values()) {
            route.filePipelineOperations().forEach((method, names) ->
                    server.put(method + " " + normalize(route.template()), new TreeSet<>(names)));
        }
        List<Object> resources = new ArrayList<>(JerseyConfig.resources(null, null, null, null, null, null, null));
        resources.addAll(JerseyConfig.adminResources(null, null, null, null, null, null, null, null, null, null, null));
        for (Object resource : resources) {
            collectQueries(Resource.from(resource.getClass()), "", server);
        }
        server.values().removeIf(Set::isEmpty);
        assertThat(server).containsKey("GET /policies/{}/{}");
        assertThat(specQueries()).isEqualTo(server);
    }

    private static void collectQueries(Resource resource, String prefix, Map<String, Set<String>> queries) {
        String path = (prefix + "/" + (resource.getPath() == null ? "" : resource.getPath())).replaceAll("/+", "/");
        for (ResourceMethod method : resource.getResourceMethods()) {
            String key = method.getHttpMethod() + " " + normalize(path);
            Set<String> names = queries.computeIfAbsent(key, k -> new TreeSet<>());
            for (Parameter parameter : method.getInvocable().getParameters()) {
                if (parameter.getSource() == Parameter.Source.QUERY) {
                    names.add(parameter.getSourceName());
                }
            }
        }
        for (Resource child : resource.getChildResources()) {
            collectQueries(child, path, queries);
        }
    }

    static Map<String, Set<String>> specQueries() throws Exception {
        Path spec = locate("openapi.yaml");
        JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(spec));
        Map<String, Set<String>> queries = new TreeMap<>();
        root.path("paths").properties().forEach(path -> path.getValue().properties().forEach(operation -> {
            if (!HTTP_METHODS.contains(operation.getKey())) {
                return;
            }
            Set<String> names = new TreeSet<>();
            List<JsonNode> parameters = new ArrayList<>();
            path.getValue().path("parameters").forEach(parameters::add);
            operation.getValue().path("parameters").forEach(parameters::add);
            for (JsonNode parameter : parameters) {
                JsonNode resolved = parameter.has("$ref")
                        ? root.at(parameter.get("$ref").asText().substring(1))
                        : parameter;
                if ("query".equals(resolved.path("in").asText())) {
                    names.add(resolved.path("name").asText());
                }
            }
            if (!names.isEmpty()) {
                String key = operation.getKey().toUpperCase(Locale.ROOT) + " " + normalize(canonical(path.getKey()));
                Set<String> previous = queries.put(key, names);
                // An alias documents the same parameters as its versioned route.
                assertThat(previous == null || previous.equals(names)).as("query parameters of %s", key).isTrue();
            }
        }));
        return queries;
    }

    /**
     * relayd's API as the spec documents it: an unversioned path ({@code /rudder/relay-api/...}, which {@link
     * RelayApiAlias} maps to {@code /rudder/relay-api/1/...}) documented next to its versioned one (remote run,
     * on both listeners) has exactly its methods; the node-facing families the TLS listener alone serves
     * (shared-folder, shared-files) are documented only under Apache's unversioned path, the one that listener
     * answers ({@link Route#RELAY_API_DENIED} refuses the versioned one).
     */
    @Test
    void relayApiPathsInTheSpecAreTheOnesEachListenerServes() throws Exception {
        Path spec = locate("openapi.yaml");
        JsonNode paths = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(spec)).path("paths");
        int pairs = 0;
        for (var path : (Iterable<Map.Entry<String, JsonNode>>) paths.properties()::iterator) {
            String canonical = canonical(path.getKey());
            if (!canonical.equals(path.getKey()) && paths.has(canonical)) {
                pairs++;
                assertThat(methods(path.getValue())).as(path.getKey()).isEqualTo(methods(paths.get(canonical)));
            }
        }
        assertThat(pairs).isPositive();
        for (String family : List.of("shared-folder", "shared-files")) {
            assertThat(paths.fieldNames()).toIterable().as(family)
                    .anyMatch(name -> name.startsWith("/rudder/relay-api/" + family + "/"))
                    .noneMatch(name -> name.startsWith("/rudder/relay-api/1/" + family + "/"));
        }
    }

    /**
     * The DTOs of relayd's {@code system/*} answers: every JSON field a fully filled one writes is a property of its
     * schema, and the other way round.
     */
    @Test
    void specDescribesExactlyTheFieldsOfTheSystemAnswers() throws Exception {
        JsonNode schemas = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(locate("openapi.yaml")))
                .path("components").path("schemas");
        SystemInfo.Version version = new SystemInfo.Version("8.3", "8.3.2");
        SystemStatus.State state = new SystemStatus.State("error", "details");
        Map<String, Object> filled = Map.of(
                "SystemInfo", new SystemInfo("8.3", "8.3.2", version, version),
                "SystemVersion", version,
                "SystemStatus", new SystemStatus(state, state),
                "SystemState", state);
        ObjectMapper json = new ObjectMapper();
        filled.forEach((schema, dto) -> {
            Set<String> written = new TreeSet<>();
            json.valueToTree(dto).fieldNames().forEachRemaining(written::add);
            Set<String> documented = new TreeSet<>();
            schemas.path(schema).path("properties").fieldNames().forEachRemaining(documented::add);
            assertThat(documented).as(schema).isEqualTo(written);
        });
    }

    private static Set<String> methods(JsonNode path) {
        Set<String> methods = new TreeSet<>();
        path.fieldNames().forEachRemaining(name -> {
            if (HTTP_METHODS.contains(name)) {
                methods.add(name);
            }
        });
        return methods;
    }

    /** {@code /rudder/relay-api/x} (Apache's path) is {@code /rudder/relay-api/1/x}; other paths are themselves. */
    static String canonical(String path) {
        return path.startsWith("/rudder/relay-api/") && !path.startsWith("/rudder/relay-api/1/")
                ? "/rudder/relay-api/1/" + path.substring("/rudder/relay-api/".length())
                : path;
    }

    static Set<String> specOperations() throws Exception {
        Path spec = locate("openapi.yaml");
        JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(spec));
        Set<String> operations = new TreeSet<>();
        root.path("paths").properties().forEach(path -> path.getValue().properties().forEach(operation -> {
            if (HTTP_METHODS.contains(operation.getKey())) {
                operations.add(operation.getKey().toUpperCase(Locale.ROOT) + " " + normalize(canonical(path.getKey())));
            }
        }));
        return operations;
    }

    static Set<String> serverOperations() {
        Set<String> operations = new TreeSet<>();
        List<Object> resources = new ArrayList<>(JerseyConfig.resources(null, null, null, null, null, null, null));
        resources.addAll(JerseyConfig.adminResources(null, null, null, null, null, null, null, null, null, null, null));
        for (Object resource : resources) {
            collect(Resource.from(resource.getClass()), "", operations);
        }
        Set<String> withHead = new TreeSet<>(operations);
        for (String operation : operations) {
            if (operation.startsWith("GET ")) {
                withHead.add("HEAD " + operation.substring(4));
            }
        }
        for (Route route : Route.values()) {
            for (String method : route.filePipelineOperations().keySet()) {
                withHead.add(method + " " + normalize(route.template()));
            }
            // The webapp's prefix, proxied when configured: documented as one path, the webapp's API being its own.
            for (String method : route.proxiedMethods()) {
                withHead.add(method + " " + normalize(route.template()));
            }
        }
        return withHead;
    }

    private static void collect(Resource resource, String prefix, Set<String> operations) {
        String path = (prefix + "/" + (resource.getPath() == null ? "" : resource.getPath())).replaceAll("/+", "/");
        for (ResourceMethod method : resource.getResourceMethods()) {
            operations.add(method.getHttpMethod() + " " + normalize(path));
        }
        for (Resource child : resource.getChildResources()) {
            collect(child, path, operations);
        }
    }

    /** Parameter names and regexes do not matter, only the shape: {@code /policies/{}/{}}. */
    static String normalize(String path) {
        String shaped = TEMPLATE.matcher(path).replaceAll("{}");
        return shaped.length() > 1 && shaped.endsWith("/") ? shaped.substring(0, shaped.length() - 1) : shaped;
    }

    private static Path locate(String name) {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.exists(dir.resolve(name)) && Files.exists(dir.resolve("pom.xml"))) {
                return dir.resolve(name);
            }
        }
        throw new IllegalStateException(name + " not found above " + Path.of("").toAbsolutePath());
    }
}
