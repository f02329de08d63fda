package io.pintle.server.remoterun;

import io.pintle.api.dto.RemoteRunEvent;
import io.pintle.server.nodes.NodeId;
import io.pintle.server.overload.Bounded;
import io.pintle.server.threads.Timers;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pull channel's live state: which nodes hold a long poll for orders ({@code GET
 * /rudder/relay-api/remote-run/orders?wait=N}), and the orders given to them whose output is awaited. A node that
 * accepts no inbound connection is run through it: the order completes its parked poll at once (no thread was held
 * while it waited), the node runs its agent and sends the output back ({@code PUT .../orders/<order>}), framed as
 * the agent helper frames it.
 *
 * <p>A node counts as connected while its poll is parked, while it runs an order, and for the reconnect grace
 * ({@code [remote_run] reconnect_grace}) after its last poll ended (the moment between two polls): an order for it
 * then waits in its queue (at most {@link #MAX_QUEUED}) for the next poll. Any other node is not connected, and the
 * caller learns it at once.
 */
public final class PullChannels implements AutoCloseable {
    /** Orders waiting for one node's next poll. */
    public static final int MAX_QUEUED = 4;
    /** After an order is given, how long the node has to start its report before it is counted as never given. */
    public static final Duration REPORT_START = Duration.ofSeconds(15);
    /**
     * Output kept per order while the run waiting for it has not passed it on (each line counted with {@link
     * #LINE_OVERHEAD}); past it, lines are dropped.
     */
    public static final long MAX_BUFFERED_BYTES = 4L << 20;
    /** The same, over all orders. */
    public static final long MAX_BUFFERED_TOTAL = 32L << 20;
    /** What a kept line costs beyond its characters (the string and its queue node). */
    static final int LINE_OVERHEAD = 64;

    private static final Logger LOG = LoggerFactory.getLogger(PullChannels.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final int maxParked;
    private final Duration reportGrace;
    /** How long an order waits for a node that was connected a moment ago to poll again. */
    private final Duration reconnectGrace;
    private final Timers timers;
    private final LongSupplier nanos;
    private final Map<NodeId, Channel> channels = new ConcurrentHashMap<>();
    private final Map<String, Order> orders = new ConcurrentHashMap<>();
    private final Bounded parked;
    private final Bounded bufferedTotal = new Bounded(MAX_BUFFERED_TOTAL);

    /**
     * @param maxParked polls parked at once, over all nodes
     * @param reportGrace after the agent's timeout, how long a node has to report ({@code [remote_run]
     *     report_grace})
     * @param reconnectGrace how long a node whose poll ended still counts as connected ({@code [remote_run]
     *     reconnect_grace})
     * @param scheduler the server's scheduler (poll and order timers)
     */
    public PullChannels(int maxParked, Duration reportGrace, Duration reconnectGrace,
            ScheduledExecutorService scheduler) {
        this(maxParked, reportGrace, reconnectGrace, System::nanoTime, scheduler);
    }

    /**
     * @param maxParked polls parked at once, over all nodes
     * @param reportGrace after the agent's timeout, how long a node has to report
     * @param reconnectGrace how long a node whose poll ended still counts as connected
     * @param nanos the clock that tells how long ago a node polled
     * @param scheduler the server's scheduler
     */
    PullChannels(int maxParked, Duration reportGrace, Duration reconnectGrace, LongSupplier nanos,
            ScheduledExecutorService scheduler) {
        this.maxParked = maxParked;
        this.parked = new Bounded(maxParked);
        this.reportGrace = reportGrace;
        this.reconnectGrace = reconnectGrace;
        this.nanos = nanos;
        // Short tasks under one node's lock: they run on the scheduler itself. Closing cancels them all.
        this.timers = new Timers(scheduler);
    }

    /** What answers a parked poll: exactly one of these is called, once. */
    public interface Poll {
        /** @param order the order to send ({@link Order#line}) */
        void order(Order order);

        /** The wait ran out: no order (204). */
        void nothing();

        /** A newer poll of the same node replaced this one (409: two clients for one node back off). */
        void replaced();
    }

    /** A parked poll, for its request to cancel when the client goes away. */
    public interface Parked {
        /**
         * The client is gone: forget the poll (the node stays connected for the reconnect grace).
         *
         * @return whether it was still parked (false: it was answered, and its answer completes the request)
         */
        boolean cancel();
    }

    /** Refused: too many polls parked at once. */
    public static final class Full extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Full(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Parks a node's poll until an order comes or the wait runs out. An order already queued for the node is
     * given at once. A previous poll of the same node (a reconnect whose old connection is not yet known closed, or
     * a second client with the node's key) is answered {@link Poll#replaced}.
     *
     * @param node the polling node
     * @param wait how long at most
     * @param poll answers it
     * @return the parked poll, or null when it was answered at once
     * @throws Full when {@code maxParked} polls wait already
     */
    public Parked park(NodeId node, Duration wait, Poll poll) {
        Channel channel = channels.computeIfAbsent(node, id -> new Channel());
        Order queued;
        Entry entry = null;
        // One locked section: an order queued by a dispatch cannot slip between the look at the queue and parking.
        synchronized (channel) {
            channel.seen = nanos.getAsLong();
            queued = channel.queue.pollFirst();
            if (queued != null) {
                deliver(channel, queued);
            } else {
                entry = parkLocked(channel, wait, poll);
            }
        }
        if (queued != null) {
            poll.order(queued);
            return null;
        }
        if (entry.replaced != null) {
            entry.replaced.replaced();
        }
        if (entry.timer == null) {
            // Stopping: not parked.
            poll.nothing();
            return null;
        }
        Entry parkedEntry = entry;
        return () -> cancel(channel, parkedEntry);
    }

    /** Parks a poll, under the channel's lock; its {@code replaced} is the poll it replaced, if any. */
    private Entry parkLocked(Channel channel, Duration wait, Poll poll) {
        if (channel.poll == null && !parked.tryIncrement()) {
            throw new Full(maxParked + " nodes hold a remote-run order channel already ([remote_run] max_channels)");
        }
        Entry entry = new Entry(poll);
        if (channel.poll != null) {
            entry.replaced = channel.poll.poll;
            channel.poll.timer.cancel(false);
        }
        channel.poll = entry;
        try {
            entry.timer = timers.schedule(() -> expire(channel, entry), wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            channel.poll = null;
            parked.decrement();
        }
        return entry;
    }

    private void expire(Channel channel, Entry entry) {
        if (release(channel, entry)) {
            entry.poll.nothing();
        }
    }

    private boolean cancel(Channel channel, Entry entry) {
        if (release(channel, entry)) {
            entry.timer.cancel(false);
            return true;
        }
        return false;
    }

    /** @return whether the entry was still the node's parked poll (and is no longer) */
    private boolean release(Channel channel, Entry entry) {
        synchronized (channel) {
            if (channel.poll != entry) {
                return false;
            }
            channel.poll = null;
            channel.seen = nanos.getAsLong();
            parked.decrement();
            return true;
        }
    }

    /**
     * Gives a node an order, if it is connected.
     *
     * @param node the node
     * @param order what to run
     * @param timeout how long its agent may run (the node has the report grace more to report)
     * @param activity told when the order has new output or ends (once until {@link Order#drain} is called), or
     *     null when nobody awaits its outcome (its output is then dropped as it comes)
     * @return the order, or null when the node is not connected (nothing was given to it)
     */
    public Order dispatch(NodeId node, RunOrder order, Duration timeout, Consumer<Order> activity) {
        Channel channel = channels.get(node);
        if (channel == null) {
            return null;
        }
        Order given;
        Entry entry;
        synchronized (channel) {
            boolean recent = nanos.getAsLong() - channel.seen < reconnectGrace.toNanos();
            if (channel.poll == null && channel.running == 0 && !recent) {
                return null;
            }
            given = new Order(HexFormat.of().formatHex(randomBytes()), node, order, timeout, activity,
                    bufferedTotal);
            orders.put(given.id, given);
            entry = channel.poll;
            if (entry != null) {
                channel.poll = null;
                parked.decrement();
                entry.timer.cancel(false);
            } else if (channel.queue.size() >= MAX_QUEUED) {
                orders.remove(given.id);
                given.end(RemoteRunEvent.ERROR, null, false, MAX_QUEUED + " orders already wait for node " + node
                        + " to poll again");
                return given;
            } else {
                channel.queue.addLast(given);
                // A node running an order polls again when it has reported: the grace starts then.
                if (channel.running == 0) {
                    awaitPoll(channel, given);
                }
                return given;
            }
            deliver(channel, given);
        }
        entry.poll.order(given);
        return given;
    }

    /** Under the channel's lock: a queued order waits the reconnect grace for the node's next poll. */
    private void awaitPoll(Channel channel, Order order) {
        order.pickup = schedule(order, reconnectGrace, () -> {
            boolean waiting;
            synchronized (channel) {
                waiting = channel.queue.remove(order);
            }
            if (waiting) {
                orders.remove(order.id);
                order.end(RemoteRunEvent.UNREACHABLE, null, false, "node " + order.node + " did not poll for "
                        + "orders again within " + reconnectGrace.toSeconds() + " s (its order channel dropped)");
            }
        });
    }

    /** Marks the order given, under the channel's lock: it now awaits the node's report. */
    private void deliver(Channel channel, Order order) {
        channel.running++;
        order.channel = channel;
        if (order.pickup != null) {
            order.pickup.cancel(false);
        }
        // The order may have gone into a connection that was already dead: a node that has it starts its report
        // with its agent, so no report by then means it never came.
        order.pickup = schedule(order, REPORT_START, () -> {
            if (!order.reporting.get()) {
                finish(order, RemoteRunEvent.UNREACHABLE, null, false, "node " + order.node + " did not start "
                        + "its report within " + REPORT_START.toSeconds() + " s of the order: the order did not "
                        + "reach it (its poll's connection was gone)");
            }
        });
        Duration deadline = order.timeout.plus(reportGrace);
        order.deadline = schedule(order, deadline, () -> finish(order, RemoteRunEvent.TIMEOUT, null, true, "node "
                + order.node + " took the order but did not report within " + deadline.toSeconds() + " s"));
        LOG.debug("remote run: order {} ({}) given to node {} over its order channel", order.id,
                order.order.command(), order.node);
    }

    private ScheduledFuture<?> schedule(Order order, Duration delay, Runnable task) {
        try {
            return timers.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            order.end(RemoteRunEvent.ERROR, null, false, "the server is stopping");
            return null;
        }
    }

    /**
     * @param id an order id from a node's {@code PUT}
     * @param node the node that sends it
     * @return the order, when it is that node's and still awaited; null otherwise
     */
    public Order awaited(String id, NodeId node) {
        Order order = orders.get(id);
        return order != null && order.node.equals(node) && order.channel != null ? order : null;
    }

    /**
     * Ends an order with the node's report: its agent's exit code (the node runs it under {@code timeout(1)}, as
     * the agent helper does), or null when the report ended without its status line.
     *
     * @param order the order
     * @param exit the exit code, or null
     */
    public void reported(Order order, Integer exit) {
        if (exit == null) {
            finish(order, RemoteRunEvent.ERROR, null, false, "node " + order.node + "'s report ended without the "
                    + "agent's exit status (its last line must be '<order> exit <code>')");
        } else if (exit == 0) {
            finish(order, RemoteRunEvent.SUCCESS, 0, false, null);
        } else if (exit == AgentLauncher.TIMEOUT_EXIT
                || exit == AgentLauncher.KILLED_EXIT && order.elapsed().compareTo(order.timeout) >= 0) {
            finish(order, RemoteRunEvent.TIMEOUT, null, true, "node " + order.node + " stopped its agent at the "
                    + "run's timeout");
        } else {
            finish(order, RemoteRunEvent.FAILED, exit, false, "the agent exited with code " + exit);
        }
    }

    /**
     * Ends an order: its status, once; later calls do nothing.
     *
     * @param order the order
     * @param status its status
     * @param exitCode the agent's exit code, or null
     * @param timedOut whether it ended by a timeout
     * @param detail why, or null
     */
    public void finish(Order order, String status, Integer exitCode, boolean timedOut, String detail) {
        if (orders.remove(order.id, order)) {
            for (ScheduledFuture<?> timer : new ScheduledFuture<?>[] {order.deadline, order.pickup}) {
                if (timer != null) {
                    timer.cancel(false);
                }
            }
            Channel channel = order.channel;
            if (channel != null) {
                synchronized (channel) {
                    channel.running--;
                    channel.seen = nanos.getAsLong();
                    if (channel.running == 0 && channel.poll == null) {
                        // Orders queued while it ran: the node polls again after this report.
                        for (Order queued : channel.queue) {
                            if (queued.pickup == null) {
                                awaitPoll(channel, queued);
                            }
                        }
                    }
                }
            }
            order.end(status, exitCode, timedOut, detail);
        }
    }

    /**
     * @param node a node
     * @return whether an order for it would be given now or at its next poll
     */
    public boolean connected(NodeId node) {
        Channel channel = channels.get(node);
        if (channel == null) {
            return false;
        }
        synchronized (channel) {
            return channel.poll != null || channel.running > 0
                    || nanos.getAsLong() - channel.seen < reconnectGrace.toNanos();
        }
    }

    /** @return the nodes whose poll is parked now */
    public List<NodeId> polling() {
        List<NodeId> nodes = new ArrayList<>();
        channels.forEach((node, channel) -> {
            synchronized (channel) {
                if (channel.poll != null) {
                    nodes.add(node);
                }
            }
        });
        return nodes;
    }

    /** @return polls parked now */
    public int parked() {
        return (int) parked.get();
    }

    /** @return orders given or queued whose result is awaited */
    public int awaited() {
        return orders.size();
    }

    /** Every parked poll is answered with nothing; awaited orders end with an error. */
    @Override
    public void close() {
        timers.close();
        for (Channel channel : channels.values()) {
            Entry entry;
            synchronized (channel) {
                entry = channel.poll;
                channel.poll = null;
            }
            if (entry != null) {
                parked.decrement();
                entry.poll.nothing();
            }
        }
        for (Order order : orders.values()) {
            finish(order, RemoteRunEvent.ERROR, null, false, "the server is stopping");
        }
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    /** One node's channel; guarded by itself. */
    private static final class Channel {
        final Deque<Order> queue = new ArrayDeque<>();
        Entry poll;
        int running;
        long seen = Long.MIN_VALUE / 2;

    }

    private static final class Entry {
        final Poll poll;
        ScheduledFuture<?> timer;
        Poll replaced;

        Entry(Poll poll) {
            this.poll = poll;
        }
    }

    /**
     * One order given to a node: its output as the node sends it (buffered until the run waiting for it passes it
     * on), then its end.
     */
    public static final class Order {
        private final String id;
        private final NodeId node;
        private final RunOrder order;
        private final Duration timeout;
        private final Consumer<Order> activity;
        private final AtomicBoolean signalled = new AtomicBoolean();
        private final ConcurrentLinkedQueue<String> output = new ConcurrentLinkedQueue<>();
        private final AtomicLong buffered = new AtomicLong();
        private final Bounded bufferedTotal;
        private final AtomicBoolean reporting = new AtomicBoolean();
        private final CompletableFuture<RemoteRunEvent> end = new CompletableFuture<>();
        private final long start = System.nanoTime();
        private volatile boolean dropped;
        private volatile Channel channel;
        private volatile ScheduledFuture<?> deadline;
        private volatile ScheduledFuture<?> pickup;

        Order(String id, NodeId node, RunOrder order, Duration timeout, Consumer<Order> activity,
                Bounded bufferedTotal) {
            this.bufferedTotal = bufferedTotal;
            this.id = id;
            this.node = node;
            this.order = order;
            this.timeout = timeout;
            this.activity = activity;
        }

        /** @return its id: 32 hexadecimal digits, the nonce of its output's framing */
        public String id() {
            return id;
        }

        /** @return the node it is for */
        public NodeId node() {
            return node;
        }

        /**
         * Claims the report: only one {@code PUT} may report on an order.
         *
         * @return whether this caller is the first
         */
        public boolean claimReport() {
            return reporting.compareAndSet(false, true);
        }

        /** @return how long since the order was made */
        public Duration elapsed() {
            return Duration.ofNanos(System.nanoTime() - start);
        }

        /** @return how long the node's agent may run ({@code [remote_run] timeout}) */
        public Duration timeout() {
            return timeout;
        }

        /** @return what the node receives: {@code <order> <command>[ <conditions>]} */
        public String line() {
            return id + " " + order.command().wire()
                    + (order.conditions().isEmpty() ? "" : " " + order.conditions().joined());
        }

        /**
         * @param lines receives the agent's lines, framing removed
         * @return what reads the node's {@code PUT} body, chunk by chunk
         */
        public Reader reader() {
            FramedOutput framed = new FramedOutput(id, this::line);
            return new Reader(new LineSplitter(framed), framed);
        }

        private void line(String line) {
            if (activity == null) {
                return;
            }
            long cost = line.length() + (long) LINE_OVERHEAD;
            if (buffered.get() + cost > MAX_BUFFERED_BYTES || bufferedTotal.addIfRoom(cost) < 0) {
                dropped = true;
                signal();
                return;
            }
            buffered.addAndGet(cost);
            output.add(line);
            signal();
        }

        private void signal() {
            if (activity != null && signalled.compareAndSet(false, true)) {
                activity.accept(this);
            }
        }

        /**
         * @param sink receives the output lines the node sent since the last call
         */
        public void drain(RunSink sink) {
            signalled.set(false);
            String line;
            while ((line = output.poll()) != null) {
                long cost = line.length() + (long) LINE_OVERHEAD;
                buffered.addAndGet(-cost);
                bufferedTotal.subtract(cost);
                sink.accept(RemoteRunEvent.output(node.value(), line));
            }
        }

        /** @return its status event once it ended, else null */
        public RemoteRunEvent ended() {
            return end.getNow(null);
        }

        /** @return whether output lines were dropped for want of a reader */
        public boolean dropped() {
            return dropped;
        }

        private void end(String status, Integer exitCode, boolean timedOut, String detail) {
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            if (end.complete(RemoteRunEvent.status(node.value(), status, exitCode, millis, timedOut, detail))) {
                signalled.set(false);
                signal();
            }
        }
    }

    /** Reads an order's output as the node sends it. */
    public static final class Reader {
        private final LineSplitter splitter;
        private final FramedOutput framed;

        Reader(LineSplitter splitter, FramedOutput framed) {
            this.splitter = splitter;
            this.framed = framed;
        }

        /** @param chunk the next bytes of the body */
        public void feed(ByteBuffer chunk) {
            splitter.feed(chunk);
        }

        /** @return the agent's exit code from the framing once the body ended, or null when it never came */
        public Integer finish() {
            splitter.finish();
            return framed.exit();
        }
    }
}
