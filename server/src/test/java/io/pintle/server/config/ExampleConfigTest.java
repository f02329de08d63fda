package io.pintle.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code deploy/pintle.example.toml} documents exactly the defaults: every setting it shows, as a real line or a
 * commented {@code # key = value}, is what the server does without it, and every key the loader takes is shown.
 * "Is the default" is asked of the loader itself: a configuration with the shown line must load into the same
 * {@link ServerConfig} as one without it.
 */
class ExampleConfigTest {
    /**
     * Shown lines that are illustrations, not defaults (the key has no value by default, or the line shows another
     * platform), with the reason. A changed line is checked again.
     */
    private static final Map<String, String> EXAMPLES = Map.of(
            "general.node_id = \"root\"", "no default: the id is read from node_id_file",
            "general.proxy_protocol_from = [\"10.0.0.5\", \"10.0.0.6\", \"2001:db8::5\"]",
            "empty by default (off): load balancers' addresses",
            "nodes.crl_url = \"http://pki.example.org/fleet-ca.crl\"", "unset by default: no CRL fetch",
            "upstream.url = \"https://rudder.example.org\"", "unset on a root",
            "upstream.key_hash = \"sha256//...\"", "unset by default: the pin is taken from the certificate",
            "remote_run.run = ['C:\\Program Files\\Rudder\\bin\\rudder.exe', \"agent\", \"run\"]",
            "the Windows (DSC) form",
            "remote_run.agent_socket = \"/run/pintle-agent.sock\"",
            "unset by default (Pintle starts the argv); the package's value",
            "webapp.proxy = \"http://127.0.0.1:8080\"", "unset by default (no proxy); Rudder's webapp",
            "cfengine.listen = \"0.0.0.0:5309\"", "unset by default (off); cf-serverd's port in Rudder");

    /** Keys that must be set together, shown together. */
    private static final List<Set<String>> PAIRS = List.of(Set.of("tls.certificate", "tls.key"),
            Set.of("upstream.client_certificate", "upstream.client_key"));

    /** Lines a key's default depends on: the Apache include of ids is read only in certificate validation. */
    private static final Map<String, String> CONTEXT =
            Map.of("nodes.nodes_auth_file", "authentication = [\"cert_validation\"]");

    /** Without {@code node_id}, the loader reads Rudder's {@code uuid.hive}, which a build machine lacks. */
    private static final String NODE_ID = "node_id = \"root\"";

    private static final Pattern TABLE = Pattern.compile("^\\[([a-z_.]+)\\]\\s*$");
    private static final Pattern SETTING = Pattern.compile("^([a-z_]+)\\s*=.*");
    private static final TomlMapper TOML = new TomlMapper();

    /** A setting the example shows: its table, key and TOML line (a commented one without its {@code #}). */
    record Shown(String table, String key, String text, int line) {
        String name() {
            return table + "." + key;
        }
    }

    private static List<Shown> shown;

    @TempDir
    Path dir;

    @BeforeAll
    static void readExample() throws IOException {
        shown = shown(Files.readAllLines(example(), StandardCharsets.UTF_8));
    }

    /** The example, found from the module's directory (where the build runs tests) or the repository's. */
    private static Path example() {
        for (Path at = Path.of("").toAbsolutePath(); at != null; at = at.getParent()) {
            Path file = at.resolve("deploy/pintle.example.toml");
            if (Files.exists(file)) {
                return file;
            }
        }
        throw new AssertionError("deploy/pintle.example.toml not found above " + Path.of("").toAbsolutePath());
    }

    /**
     * The settings shown: real lines, and commented ones ({@code # key = value}, one space at most after the
     * {@code #}) whose text is TOML; an array may go on over commented lines. Prose never parses as TOML.
     */
    static List<Shown> shown(List<String> lines) {
        List<Shown> settings = new ArrayList<>();
        String table = "";
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher header = TABLE.matcher(line);
            if (header.matches()) {
                table = header.group(1);
                continue;
            }
            boolean commented = line.startsWith("#");
            String text = commented ? line.replaceFirst("^# ?", "") : line;
            Matcher setting = SETTING.matcher(text);
            if (!setting.matches()) {
                continue;
            }
            int first = i;
            while (depth(text) > 0 && i + 1 < lines.size()) {
                String next = lines.get(++i);
                text += " " + (commented ? next.replaceFirst("^#\\s*", "") : next.strip());
            }
            try {
                TOML.readTree(text);
            } catch (JacksonException e) {
                i = first;
                continue;
            }
            settings.add(new Shown(table, setting.group(1), text.strip(), first + 1));
        }
        return settings;
    }

    private static int depth(String text) {
        return (int) (text.chars().filter(c -> c == '[').count() - text.chars().filter(c -> c == ']').count());
    }

    /** Every key the loader takes, {@code table.key}, from the records Jackson reads the file into. */
    static Set<String> keysInCode() {
        Set<String> keys = new TreeSet<>();
        collect(ConfigLoader.RawConfig.class, "", keys);
        return keys;
    }

    private static void collect(Class<?> raw, String table, Set<String> keys) {
        for (RecordComponent component : raw.getRecordComponents()) {
            JsonProperty property = component.getAccessor().getAnnotation(JsonProperty.class);
            String name = property != null ? property.value() : component.getName();
            String path = table.isEmpty() ? name : table + "." + name;
            if (component.getType().isRecord()) {
                collect(component.getType(), path, keys);
            } else {
                keys.add(path);
            }
        }
    }

    @Test
    void theExampleShowsEveryKeyTheLoaderTakesAndNoOther() {
        Set<String> inExample = new TreeSet<>();
        shown.forEach(setting -> inExample.add(setting.name()));
        Set<String> inCode = keysInCode();

        assertThat(inCode).as("keys of ConfigLoader's Raw* records").hasSizeGreaterThan(50);
        assertThat(inExample).as("keys the example shows that the loader does not take").isSubsetOf(inCode);
        assertThat(inCode).as("keys the loader takes that the example does not show").isSubsetOf(inExample);
    }

    @Test
    void everyValueTheExampleShowsIsTheDefault() throws Exception {
        assumeFalse(Files.exists(ServerConfig.Tls.DEDICATED_CERTIFICATE)
                && Files.exists(ServerConfig.Tls.DEDICATED_KEY), "a dedicated certificate here is the default [tls] pair");
        List<String> differ = new ArrayList<>();
        for (List<Shown> group : groups()) {
            Shown first = group.get(0);
            if (first.name().equals("general.node_id_file")) {
                // It excludes node_id, without which the loader reads the file: compared directly.
                JsonNode value = TOML.readTree(first.text()).get("node_id_file");
                if (!Path.of(value.asText()).equals(ServerConfig.General.DEFAULT_NODE_ID_FILE)) {
                    differ.add(describe(group, "default " + ServerConfig.General.DEFAULT_NODE_ID_FILE));
                }
                continue;
            }
            String context = CONTEXT.getOrDefault(first.name(), "");
            ServerConfig without = load(first.table(), context, List.of());
            ServerConfig with = load(first.table(), context, group.stream().map(Shown::text).toList());
            if (!normalized(with).equals(normalized(without))) {
                differ.add(describe(group, "loads as\n    " + normalized(with) + "\nnot as\n    "
                        + normalized(without)));
            }
        }
        assertThat(differ).as("settings the example shows that are not the defaults").isEmpty();
    }

    @Test
    void theIllustrationsAreStillInTheExample() {
        Set<String> lines = new LinkedHashSet<>();
        shown.forEach(setting -> lines.add(setting.table() + "." + setting.text()));
        assertThat(lines).containsAll(EXAMPLES.keySet());
    }

    /** The shown settings to check, one group each: a pair together, a pool's table together, else one by one. */
    private static List<List<Shown>> groups() {
        Map<String, List<Shown>> groups = new LinkedHashMap<>();
        for (Shown setting : shown) {
            if (EXAMPLES.containsKey(setting.table() + "." + setting.text())) {
                continue;
            }
            String group = setting.name();
            for (Set<String> pair : PAIRS) {
                if (pair.contains(setting.name())) {
                    group = String.join("+", new TreeSet<>(pair));
                }
            }
            // A pool's per_address follows its concurrency when only that is set: a table is checked whole.
            if (setting.table().startsWith("limits.")) {
                group = setting.table();
            }
            groups.computeIfAbsent(group, key -> new ArrayList<>()).add(setting);
        }
        return List.copyOf(groups.values());
    }

    private static String describe(List<Shown> group, String why) {
        StringBuilder text = new StringBuilder();
        for (Shown setting : group) {
            text.append("line ").append(setting.line()).append(": [").append(setting.table()).append("] ")
                    .append(setting.text()).append('\n');
        }
        return text.append("  ").append(why).toString();
    }

    /** A root's configuration with {@code lines} in {@code table}, and {@code context} in {@code [nodes]}. */
    private ServerConfig load(String table, String context, List<String> lines) throws Exception {
        Map<String, List<String>> tables = new LinkedHashMap<>();
        tables.computeIfAbsent("general", key -> new ArrayList<>()).add(NODE_ID);
        if (!context.isEmpty()) {
            tables.computeIfAbsent("nodes", key -> new ArrayList<>()).add(context);
        }
        if (!lines.isEmpty()) {
            // Not an empty table: an empty [limits.webapp] is not an absent one (its per_address follows concurrency).
            tables.computeIfAbsent(table, key -> new ArrayList<>()).addAll(lines);
        }
        StringBuilder text = new StringBuilder();
        tables.forEach((name, body) -> text.append('[').append(name).append("]\n")
                .append(String.join("\n", body)).append('\n'));
        return ConfigLoader.parse(text.toString(), dir.resolve("pintle.toml"));
    }

    /**
     * Without the flags that say a file was named in the configuration (then its absence is an error): writing a
     * default file's name makes it required, which is what the example's comments say.
     */
    private static ServerConfig normalized(ServerConfig config) {
        ServerConfig.Nodes nodes = config.nodes();
        ServerConfig.Networks networks = config.networks();
        return new ServerConfig(config.source(), config.general(), config.tls(),
                new ServerConfig.Nodes(nodes.list(), nodes.certificates(), nodes.authentication(), nodes.caFile(),
                        nodes.caMaxDepth(), nodes.idRules(), nodes.crlFiles(), nodes.deniedKeysFile(), false,
                        nodes.crlUrl(), nodes.crlFetchFile(), nodes.crlRefresh(), nodes.nodesAuthFile(), false),
                new ServerConfig.Networks(networks.allowedFile(), networks.allowed(), networks.policyServerFile(),
                        false),
                config.paths(), config.admin(), config.reload(), config.log(), config.limits(), config.upstream(),
                config.remoteRun(), config.uploads(), config.webapp(), config.cfengine(), config.delivery());
    }
}
