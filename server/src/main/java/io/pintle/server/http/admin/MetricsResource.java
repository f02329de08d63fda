package io.pintle.server.http.admin;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

/** {@code /metrics} on the admin listener: the server's registry in Prometheus text format (0.0.4). */
@Path("/metrics")
public final class MetricsResource {
    private final PrometheusRegistry registry;
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();

    public MetricsResource(PrometheusRegistry registry) {
        this.registry = registry;
    }

    @GET
    public Response metrics() {
        StreamingOutput body = output -> writer.write(output, registry.scrape());
        return Response.ok(body, writer.getContentType()).build();
    }
}
