package io.pintle.server.http.admin;

import io.pintle.api.Routes;
import io.pintle.api.dto.DeliveryCurveView;
import io.pintle.server.delivery.Delivery;
import io.pintle.server.delivery.DeliveryCurve;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The delivery curve: the share of served nodes on the current version, sampled every {@code [delivery]
 * sample_seconds} (at the default 10 s, over the last day).
 */
@Path(Routes.DELIVERY)
@Produces(MediaType.APPLICATION_JSON)
public final class DeliveryResource {
    private final Delivery delivery;

    /**
     * @param delivery the delivery state
     */
    public DeliveryResource(Delivery delivery) {
        this.delivery = delivery;
    }

    /** @return the curve and the last sample's counts */
    @GET
    public DeliveryCurveView curve() {
        Delivery.Summary summary = delivery.summary();
        List<DeliveryCurveView.Sample> samples = new ArrayList<>();
        for (DeliveryCurve.Sample sample : delivery.curve().samples()) {
            samples.add(new DeliveryCurveView.Sample(sample.time().toString(), sample.nodes(), sample.current(),
                    sample.changed()));
        }
        Instant generation = delivery.curve().generation();
        return new DeliveryCurveView(generation != null ? generation.toString() : null, summary.nodes(),
                summary.behind(), summary.silent(), summary.frozen(), summary.channels(), samples);
    }
}
