package io.pintle.server.http.jersey;

import io.pintle.server.http.BodyStream;
import io.pintle.server.http.Exchange;
import io.pintle.server.http.Problems;
import jakarta.ws.rs.core.SecurityContext;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.net.URISyntaxException;
import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.glassfish.jersey.internal.MapPropertiesDelegate;
import org.glassfish.jersey.server.ApplicationHandler;
import org.glassfish.jersey.server.ContainerException;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.ContainerResponse;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.server.internal.ContainerUtils;
import org.glassfish.jersey.server.spi.ContainerResponseWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a Jersey application on Jetty's core API, in place of Jersey's own {@code jetty-http} container, which
 * succeeds the request's callback while its last write can still be pending (Jetty's assertion in {@code
 * HttpChannelState.LastWriteCallback} fires): on HTTP/2 the request was then not logged, not counted, its
 * overload worker never given back (50 such requests took every {@code api} worker for good) or its client never
 * answered ({@code RequestCountIT} found all of these). Here the response's end is the one place that completes
 * the callback: the body's last write has finished before the callback succeeds, exactly once, or fails once.
 *
 * <p>The request's {@link Exchange} goes into the Jersey request's properties, where resources read it with
 * {@link Exchange#of(jakarta.ws.rs.container.ContainerRequestContext)}; nothing is injected. It blocks (Jersey
 * reads and writes with streams): it runs behind {@link io.pintle.server.http.edge.WorkerDispatch}.
 */
public final class JerseyHandler extends Handler.Abstract {
    private static final Logger LOG = LoggerFactory.getLogger(JerseyHandler.class);

    private final ApplicationHandler application;
    private final long minRequestBytesPerSecond;
    private final Duration rateCheck;

    /**
     * @param config the application
     * @param minRequestBytesPerSecond the floor on a request body's rate ({@link BodyStream}); 0 for none
     * @param rateCheck the period the floor is checked over ({@code [limits] rate_check_seconds})
     */
    public JerseyHandler(ResourceConfig config, long minRequestBytesPerSecond, Duration rateCheck) {
        super(InvocationType.BLOCKING);
        this.application = new ApplicationHandler(config);
        this.minRequestBytesPerSecond = minRequestBytesPerSecond;
        this.rateCheck = rateCheck;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        URI base;
        URI uri;
        try {
            base = new URI(request.getHttpURI().getScheme(), null, Request.getServerName(request),
                    Request.getServerPort(request), "/", null, null);
            String query = request.getHttpURI().getQuery();
            uri = new URI(base.getScheme() + "://" + base.getRawAuthority()
                    + ContainerUtils.encodeUnsafeCharacters(request.getHttpURI().getPath())
                    + (query == null ? "" : "?" + ContainerUtils.encodeUnsafeCharacters(query)));
        } catch (URISyntaxException e) {
            Problems.write(Problems.plain(HttpStatus.BAD_REQUEST_400, "the request target is not a valid URI",
                    request.getHttpURI().getPath()), response, callback);
            return true;
        }
        boolean secure = request.isSecure();
        ContainerRequest jersey = new ContainerRequest(base, uri, request.getMethod(), new Anonymous(secure),
                new MapPropertiesDelegate(), application.getConfiguration());
        Exchange exchange = Exchange.find(request);
        if (exchange != null) {
            jersey.setProperty(Exchange.ATTRIBUTE, exchange);
        }
        for (HttpField field : request.getHeaders()) {
            jersey.header(field.getName(), field.getValue());
        }
        jersey.setEntityStream(new BodyStream(request, minRequestBytesPerSecond, rateCheck));
        jersey.setWriter(new Writer(request, response, callback));
        application.handle(jersey);
        return true;
    }

    /** No user principal: callers are identified by the exchange, per request, not by a JAX-RS security context. */
    private record Anonymous(boolean secure) implements SecurityContext {
        @Override
        public Principal getUserPrincipal() {
            return null;
        }

        @Override
        public boolean isUserInRole(String role) {
            return false;
        }

        @Override
        public boolean isSecure() {
            return secure;
        }

        @Override
        public String getAuthenticationScheme() {
            return null;
        }
    }

    /** Jersey's side of one response: status and headers, the body stream, and the one completion. */
    private static final class Writer implements ContainerResponseWriter {
        private final Request request;
        private final Response response;
        private final Callback callback;
        private final AtomicBoolean completed = new AtomicBoolean();
        private volatile OutputStream body;
        private volatile Scheduler.Task timeout;
        private volatile TimeoutHandler timeoutHandler;

        Writer(Request request, Response response, Callback callback) {
            this.request = request;
            this.response = response;
            this.callback = callback;
        }

        @Override
        public OutputStream writeResponseStatusAndHeaders(long contentLength, ContainerResponse answer)
                throws ContainerException {
            response.setStatus(answer.getStatus());
            for (Map.Entry<String, List<String>> header : answer.getStringHeaders().entrySet()) {
                for (String value : header.getValue()) {
                    response.getHeaders().add(header.getKey(), value);
                }
            }
            if (contentLength >= 0 && !response.getHeaders().contains(HttpHeader.CONTENT_LENGTH)) {
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, contentLength);
            }
            OutputStream stream = contentLength >= 0 ? new SizedBody(response, contentLength)
                    : Content.Sink.asOutputStream(response);
            body = stream;
            return stream;
        }

        @Override
        public boolean suspend(long time, TimeUnit unit, TimeoutHandler handler) {
            timeoutHandler = handler;
            if (time > 0) {
                schedule(time, unit);
            }
            return true;
        }

        @Override
        public void setSuspendTimeout(long time, TimeUnit unit) {
            Scheduler.Task previous = timeout;
            if (previous != null) {
                previous.cancel();
            }
            if (time > 0) {
                schedule(time, unit);
            }
        }

        private void schedule(long time, TimeUnit unit) {
            timeout = request.getComponents().getScheduler().schedule(() -> {
                TimeoutHandler handler = timeoutHandler;
                if (handler != null && !completed.get()) {
                    handler.onTimeout(this);
                }
            }, time, unit);
        }

        @Override
        public void commit() {
            if (!completed.compareAndSet(false, true)) {
                return;
            }
            cancelTimeout();
            OutputStream stream = body;
            try {
                // The last write is done here, blocking, before the callback succeeds: succeeding it with the last
                // write still to do makes Jetty send it from this thread while the connection may already be
                // parsing the next request (HEAD answers over HTTP/1.1 got WritePendingException and a closed
                // connection every few dozen requests).
                if (stream instanceof SizedBody sized) {
                    sized.finish();
                } else if (stream != null) {
                    stream.close();
                } else {
                    SizedBody.writeLast(response);
                }
            } catch (IOException e) {
                // The client went away (or the write failed): the response cannot be finished.
                LOG.debug("response to {} {} not finished: {}", request.getMethod(), request.getHttpURI().getPath(),
                        e.toString());
                callback.failed(e);
                return;
            } catch (RuntimeException | Error e) {
                // Whatever else ends the last write (out of memory, a bug): the request still ends, as in
                // FileHandler, and gives its worker and its client's share back; an Error then goes on.
                callback.failed(e);
                throw e;
            }
            callback.succeeded();
        }

        @Override
        public void failure(Throwable error) {
            if (!completed.compareAndSet(false, true)) {
                return;
            }
            cancelTimeout();
            if (response.isCommitted()) {
                callback.failed(error);
                return;
            }
            try {
                response.reset();
                Problems.write(Problems.incident(error, Exchange.find(request), request.getHttpURI().getPath()),
                        response, callback);
            } catch (RuntimeException | Error e) {
                // The problem could not even be written: the request still ends.
                e.addSuppressed(error);
                callback.failed(e);
                throw e;
            }
        }

        private void cancelTimeout() {
            Scheduler.Task task = timeout;
            if (task != null) {
                task.cancel();
            }
        }

        @Override
        public boolean enableResponseBuffering() {
            // Jersey then gives most answers (up to 8 KiB) a Content-Length, and SizedBody ends them in one frame;
            // but it would also hold a stream's lines until 8 KiB have come, so not for routes that stream.
            Exchange exchange = Exchange.find(request);
            return exchange == null || !exchange.route().streamsAnswers();
        }
    }

    /**
     * The body of an answer whose length is known: each write goes out at once, and the one that completes the
     * length is the last, so the answer ends with its data (one HTTP/2 DATA frame with END_STREAM). Ending it
     * with a separate empty frame instead made curl reset every stream it had already finished, and Jetty's rate
     * control then closed the connection after about a hundred requests.
     */
    private static final class SizedBody extends OutputStream {
        private final Response response;
        private final long length;
        private long written;

        SizedBody(Response response, long length) {
            this.response = response;
            this.length = length;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] bytes, int offset, int count) throws IOException {
            if (count == 0) {
                return;
            }
            written += count;
            try (Blocker.Callback done = Blocker.callback()) {
                response.write(written >= length, ByteBuffer.wrap(bytes, offset, count), done);
                done.block();
            }
        }

        @Override
        public void close() {
            // Ended by finish(), when Jersey is done with the response.
        }

        /** Ends the answer, if the last write has not yet (a HEAD, or a body shorter than announced). */
        void finish() throws IOException {
            if (written < length || length == 0) {
                writeLast(response);
            }
        }

        static void writeLast(Response response) throws IOException {
            try (Blocker.Callback done = Blocker.callback()) {
                response.write(true, null, done);
                done.block();
            }
        }
    }
}
