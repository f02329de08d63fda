package io.pintle.server.http.jersey;

import io.pintle.server.http.Exchange;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pintle.api.MediaTypes;
import io.pintle.api.Routes;
import io.pintle.api.dto.RemoteRunAccepted;
import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.api.dto.RemoteRunRequest;
import io.pintle.server.nodes.Node;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.problem.PintleException;
import io.pintle.server.reload.ServerSnapshot;
import io.pintle.server.remoterun.AgentCommand;
import io.pintle.server.remoterun.Conditions;
import io.pintle.server.remoterun.RemoteRunPlanner;
import io.pintle.server.remoterun.RemoteRunner;
import io.pintle.server.remoterun.RunOrder;
import io.pintle.server.remoterun.RunPlan;
import io.pintle.server.remoterun.RunSink;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * relayd's remote run, {@code POST /rudder/relay-api/1/remote-run/{nodes/{id}, nodes, all}} (and Apache's
 * {@code /rudder/relay-api/...}), on the admin listener (the local webapp and hooks, as relayd's localhost port;
 * both prefixes) and on the TLS listener, only Apache's unversioned prefix (see {@link RelayApiAlias}): from this
 * server's own policy server, by its pinned key, and on a root or a relay also from a caller on this machine, as
 * Rudder's webapp posts to {@code https://localhost/rudder/relay-api/...}.
 *
 * <ul>
 *   <li>relayd's form ({@code application/x-www-form-urlencoded}, at most 1 MiB): {@code asynchronous}, {@code
 *       keep_output}, {@code conditions} (or {@code classes}), {@code nodes}; runs {@code run}; answers relayd's
 *       plain text — synchronous: after the runs, with their output when {@code keep_output}; asynchronous with
 *       output: streamed as it comes; asynchronous without: at once, empty.
 *   <li>Pintle's JSON ({@link RemoteRunRequest}): a command of the fixed set, conditions, verbosity; answers NDJSON
 *       {@link RemoteRunEvent}s as they come (output, one status per node, {@code done}), or 202 at once when
 *       {@code asynchronous}. Servers use it between themselves.
 * </ul>
 */
@Path("/")
public final class RemoteRunResource {
    /** relayd's limit on the form (and ours on the JSON body). */
    public static final int MAX_BODY_BYTES = 1024 * 1024;
    /** A synchronous answer is built in memory; past this, further output is dropped (and said so). */
    public static final int MAX_SYNC_OUTPUT_BYTES = 16 * 1024 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(RemoteRunResource.class);
    private static final ObjectMapper JSON = new ObjectMapper()
            // A missing "asynchronous" is false; a field nobody knows ("args", a typo) is refused.
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    private static final MediaType TEXT = MediaType.TEXT_PLAIN_TYPE.withCharset("utf-8");

    private final RemoteRunner runner;
    private final boolean admin;

    /**
     * @param runner runs plans
     * @param admin whether this instance serves the admin listener
     */
    RemoteRunResource(RemoteRunner runner, boolean admin) {
        this.runner = runner;
        this.admin = admin;
    }

    @POST
    @Path(Routes.RELAY_API + Routes.REMOTE_RUN_NODE)
    public Response node(@PathParam("id") String id, @Context ContainerRequestContext context,
            @Context HttpHeaders headers, InputStream body) {
        return handle(Target.NODE, id, context, headers, body);
    }

    @POST
    @Path(Routes.RELAY_API + Routes.REMOTE_RUN_NODES)
    public Response nodes(@Context ContainerRequestContext context, @Context HttpHeaders headers, InputStream body) {
        return handle(Target.NODES, null, context, headers, body);
    }

    @POST
    @Path(Routes.RELAY_API + Routes.REMOTE_RUN_ALL)
    public Response all(@Context ContainerRequestContext context, @Context HttpHeaders headers, InputStream body) {
        return handle(Target.ALL, null, context, headers, body);
    }

    private enum Target { NODE, NODES, ALL }

    /** What was asked, whatever the format. */
    private record Ask(RunOrder order, List<NodeId> nodes, boolean json, boolean asynchronous, boolean keepOutput) {}

    private Response handle(Target target, String id, ContainerRequestContext context, HttpHeaders headers,
            InputStream body) {
        ServerSnapshot snapshot = Exchange.of(context).snapshot();
        authorize(snapshot, context);
        int hops = hops(headers.getHeaderString(Routes.REMOTE_RUN_HOPS_HEADER));
        byte[] bytes = read(body, headers);
        MediaType type = headers.getMediaType();
        Ask ask;
        if (type != null && type.isCompatible(MediaType.APPLICATION_JSON_TYPE)) {
            ask = json(bytes, target);
        } else if (type == null || type.isCompatible(MediaType.APPLICATION_FORM_URLENCODED_TYPE)) {
            ask = form(bytes, target);
        } else {
            throw new PintleException.UnsupportedMediaType("unsupported-media-type", "send relayd's form "
                    + "(application/x-www-form-urlencoded) or Pintle's JSON (application/json), not " + type);
        }
        List<NodeId> targets = ask.nodes();
        if (target == Target.NODE) {
            NodeId node = nodeId(id);
            if (!node.equals(snapshot.self()) && snapshot.nodes().node(node).isEmpty()) {
                throw new PintleException.NotFound("unknown-node", "node " + node + " is not in this server's node "
                        + "list");
            }
            targets = List.of(node);
        }
        RunPlan plan = RemoteRunPlanner.plan(snapshot.nodes(), snapshot.self(), targets);
        LOG.info("remote run {}{} on {} node(s) ({} through {} neighbour(s), {} here, {} unreachable), hop {}, from {}",
                ask.order().command(), ask.order().conditions().isEmpty() ? ""
                        : " -D " + ask.order().conditions().joined(),
                plan.targets().size(), plan.targets().size() - plan.unresolved().size() - (plan.local() ? 1 : 0),
                plan.hops().size(), plan.local() ? 1 : 0, plan.unresolved().size(), hops, caller(context));
        // A run lasts as long as its agents: it must not hold one of the api class's workers, nor be cut by the
        // connection's idle timeout (the agent timeout and keep-alive events bound it instead).
        Exchange.of(context).park();

        // relayd's form from another Pintle (its forwarded runs: relayd's own form, so that a relayd relay takes it
        // too) asks for events by Accept: it then gets the JSON form's events, statuses included.
        boolean events = ask.json() || acceptsEvents(headers);
        if (ask.asynchronous() && (ask.json() || !ask.keepOutput())) {
            runner.start(snapshot, ask.order(), plan, hops, RemoteRunResource::log, summary ->
                    LOG.info("remote run {} ended: {} of {} node(s) succeeded", ask.order().command(),
                            summary.succeeded(), summary.nodes()));
            if (ask.json()) {
                return Response.accepted(new RemoteRunAccepted(plan.targets().stream().map(NodeId::value).toList()))
                        .type(MediaType.APPLICATION_JSON_TYPE).build();
            }
            return Response.ok("", TEXT).build();
        }
        if (events || ask.asynchronous()) {
            EventStream stream = new EventStream();
            runner.start(snapshot, ask.order(), plan, hops, stream,
                    summary -> stream.accept(RemoteRunEvent.done(summary.nodes(), summary.succeeded())));
            Function<RemoteRunEvent, String> text = events ? null : text(snapshot);
            StreamingOutput output = out -> stream.drain(out, text);
            return Response.ok(output, events ? MediaType.valueOf(MediaTypes.NDJSON) : TEXT).build();
        }
        // relayd's synchronous mode: the answer comes after the runs, with their output if asked.
        SyncOutput collected = new SyncOutput(ask.keepOutput() ? text(snapshot) : event -> null);
        runner.run(snapshot, ask.order(), plan, hops, collected);
        return Response.ok(collected.text(), TEXT).build();
    }

    /** @return whether the caller names NDJSON in its {@code Accept} (a wildcard does not count) */
    private static boolean acceptsEvents(HttpHeaders headers) {
        for (MediaType type : headers.getAcceptableMediaTypes()) {
            if (!type.isWildcardType() && !type.isWildcardSubtype()
                    && type.isCompatible(MediaType.valueOf(MediaTypes.NDJSON))) {
                return true;
            }
        }
        return false;
    }

    private void authorize(ServerSnapshot snapshot, ContainerRequestContext context) {
        Exchange.of(context).authorize();
    }

    private String caller(ContainerRequestContext context) {
        if (admin) {
            return "the admin listener";
        }
        Exchange state = Exchange.of(context);
        return state.caller().address().getHostAddress();
    }

    private static int hops(String header) {
        if (header == null) {
            return 0;
        }
        int hops;
        try {
            hops = Integer.parseInt(header.trim());
        } catch (NumberFormatException e) {
            throw new PintleException.InvalidRequest("invalid-hops", Routes.REMOTE_RUN_HOPS_HEADER
                    + " must be a number, not '" + header + "'");
        }
        if (hops < 0 || hops >= Routes.MAX_REMOTE_RUN_HOPS) {
            throw new PintleException.InvalidRequest("too-many-hops", "the run has crossed " + hops + " servers; at "
                    + "most " + Routes.MAX_REMOTE_RUN_HOPS + " are allowed (do the node lists loop?)");
        }
        return hops;
    }

    private static byte[] read(InputStream body, HttpHeaders headers) {
        if (headers.getLength() > MAX_BODY_BYTES) {
            throw new PintleException.TooLarge("body-too-large", "a remote-run request is at most "
                    + MAX_BODY_BYTES + " bytes");
        }
        try {
            byte[] bytes = body.readNBytes(MAX_BODY_BYTES + 1);
            if (bytes.length > MAX_BODY_BYTES) {
                throw new PintleException.TooLarge("body-too-large", "a remote-run request is at most "
                        + MAX_BODY_BYTES + " bytes");
            }
            return bytes;
        } catch (IOException e) {
            throw new PintleException.InvalidRequest("body-unreadable", "the request body could not be read: "
                    + e.getMessage());
        }
    }

    private static Ask json(byte[] bytes, Target target) {
        RemoteRunRequest request;
        try {
            request = JSON.readValue(bytes, RemoteRunRequest.class);
        } catch (JacksonException e) {
            throw new PintleException.InvalidRequest("invalid-json", "the body is not a remote-run request: "
                    + e.getOriginalMessage());
        } catch (IOException e) {
            throw new PintleException.InvalidRequest("invalid-json", "the body is not a remote-run request: "
                    + e.getMessage());
        }
        if (request == null) {
            throw new PintleException.InvalidRequest("invalid-json", "the body is empty");
        }
        RunOrder order = RunOrder.of(request.command(), request.conditions(), request.verbosity());
        List<NodeId> nodes = null;
        if (target == Target.NODES) {
            if (request.nodes() == null || request.nodes().isEmpty()) {
                throw new PintleException.InvalidRequest("missing-nodes", "'nodes' must list at least one node id");
            }
            nodes = request.nodes().stream().map(RemoteRunResource::nodeId).toList();
        } else if (request.nodes() != null) {
            throw new PintleException.InvalidRequest("unexpected-nodes", "'nodes' is only for remote-run/nodes");
        }
        return new Ask(order, nodes, true, request.asynchronous(), true);
    }

    private static Ask form(byte[] bytes, Target target) {
        Map<String, String> fields = formFields(new String(bytes, StandardCharsets.UTF_8));
        boolean asynchronous = bool(fields, Routes.FORM_ASYNCHRONOUS);
        boolean keepOutput = bool(fields, Routes.FORM_KEEP_OUTPUT);
        String conditions = fields.containsKey(Routes.FORM_CONDITIONS)
                ? fields.get(Routes.FORM_CONDITIONS)
                : fields.get(Routes.FORM_CLASSES);
        RunOrder order = new RunOrder(AgentCommand.RUN, Conditions.parse(conditions));
        List<NodeId> nodes = null;
        if (target == Target.NODES) {
            String list = fields.get(Routes.FORM_NODES);
            if (list == null || list.isEmpty()) {
                throw new PintleException.InvalidRequest("missing-nodes", "the form field 'nodes' must list at least "
                        + "one node id (comma-separated)");
            }
            nodes = new ArrayList<>();
            for (String node : list.split(",", -1)) {
                nodes.add(nodeId(node));
            }
        }
        return new Ask(order, nodes, false, asynchronous, keepOutput);
    }

    /** Decodes a form; a repeated field's values are joined with commas (all form values here are lists or flags). */
    private static Map<String, String> formFields(String body) {
        Map<String, String> fields = new LinkedHashMap<>();
        if (body.isEmpty()) {
            return fields;
        }
        for (String pair : body.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            String name;
            String value;
            try {
                name = URLDecoder.decode(equals < 0 ? pair : pair.substring(0, equals), StandardCharsets.UTF_8);
                value = equals < 0 ? "" : URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new PintleException.InvalidRequest("invalid-form", "the form is not valid "
                        + "application/x-www-form-urlencoded: " + e.getMessage());
            }
            fields.merge(name, value, (a, b) -> a + "," + b);
        }
        return fields;
    }

    private static boolean bool(Map<String, String> fields, String name) {
        String value = fields.get(name);
        if (value == null || value.equals("false")) {
            return false;
        }
        if (value.equals("true")) {
            return true;
        }
        throw new PintleException.InvalidRequest("invalid-form", "the form field '" + name + "' must be true or "
                + "false, not '" + value + "'");
    }

    private static NodeId nodeId(String text) {
        try {
            return new NodeId(text);
        } catch (IllegalArgumentException e) {
            throw new PintleException.InvalidRequest("invalid-node-id", "'" + text + "' is not a node id: "
                    + e.getMessage());
        }
    }

    /** relayd's text: each output line prefixed by its node's host name, as cf-runagent does; failures said too. */
    private static Function<RemoteRunEvent, String> text(ServerSnapshot snapshot) {
        return event -> {
            if (event.node() == null) {
                return null;
            }
            String host = host(snapshot, event.node());
            if (RemoteRunEvent.OUTPUT.equals(event.type())) {
                return host + "> " + event.line() + "\n";
            }
            if (RemoteRunEvent.STATUS.equals(event.type()) && !RemoteRunEvent.SUCCESS.equals(event.status())) {
                return host + "> [pintle] " + event.status() + ": " + event.detail() + "\n";
            }
            return null;
        };
    }

    private static String host(ServerSnapshot snapshot, String node) {
        try {
            return snapshot.nodes().node(new NodeId(node)).map(Node::hostname).orElse(node);
        } catch (IllegalArgumentException e) {
            return node;
        }
    }

    /** A background run's events: statuses logged, output dropped (relayd consumes it the same way). */
    private static void log(RemoteRunEvent event) {
        if (RemoteRunEvent.STATUS.equals(event.type())) {
            if (RemoteRunEvent.SUCCESS.equals(event.status())) {
                LOG.info("remote run: {}: success ({} ms)", event.node(), event.durationMs());
            } else {
                LOG.warn("remote run: {}: {}: {}", event.node(), event.status(), event.detail());
            }
        }
    }

    /** A synchronous answer, built in memory up to {@link #MAX_SYNC_OUTPUT_BYTES}. */
    private static final class SyncOutput implements RunSink {
        private final Function<RemoteRunEvent, String> text;
        private final StringBuilder collected = new StringBuilder();
        private boolean truncated;

        SyncOutput(Function<RemoteRunEvent, String> text) {
            this.text = text;
        }

        @Override
        public synchronized void accept(RemoteRunEvent event) {
            log(event);
            String line = text.apply(event);
            if (line == null) {
                return;
            }
            if (collected.length() + line.length() > MAX_SYNC_OUTPUT_BYTES) {
                truncated = true;
                return;
            }
            collected.append(line);
        }

        synchronized String text() {
            return truncated
                    ? collected + "[pintle] output truncated at " + MAX_SYNC_OUTPUT_BYTES + " characters\n"
                    : collected.toString();
        }
    }
}
