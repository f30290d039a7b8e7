package org.cetp.inspector.relay.core;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One desktop connection: hello and token check first, then requests run concurrently
 * (several in flight, replies in any order), CANCEL, streamed results and events. Owns the
 * connection's handles. The transport (LocalSocket on the phone, TCP on the host JVM) only
 * hands over its streams; peer credentials are checked by the caller before this runs.
 */
public final class Connection implements Runnable {
    /** Where the relay writes diagnostics; never given secrets. */
    public interface Log {
        void info(String message);
    }

    private final InputStream in;
    private final OutputStream out;
    private final Dispatcher dispatcher;
    private final byte[] token;
    private final Log log;
    private final EventHub events;
    private final HandleTable handles;
    private final Object writeLock = new Object();
    private final Map<Long, Request> inFlight = new HashMap<Long, Request>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ThreadPoolExecutor workers;
    /**
     * Requests holding a slot: admitted and whose threads (the request's worker and any IPC
     * call it started) have not all ended yet. A cancelled or timed-out request keeps its slot
     * until then, so a provider that never returns cannot make the relay spawn more threads.
     */
    private final AtomicInteger slots = new AtomicInteger();
    private boolean wantsEvents;
    private volatile Runnable onAuthenticated;
    private volatile int helloTimeoutMs = Limits.HELLO_TIMEOUT_MS;
    private static final int HELLO_PENDING = 0;
    private static final int HELLO_RECEIVED = 1;
    private static final int HELLO_TIMED_OUT = 2;
    /** Who answered first: the hello or the hello timer (exactly one of them replies). */
    private final AtomicInteger helloState = new AtomicInteger(HELLO_PENDING);

    /** One daemon thread for every connection's hello timer. */
    private static final ScheduledExecutorService WATCHDOG = helloTimer();

    private static ScheduledExecutorService helloTimer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, new ThreadFactory() {
            @Override
            public Thread newThread(Runnable r) {
                Thread t = new Thread(r, "relay-hello-timer");
                t.setDaemon(true);
                return t;
            }
        });
        timer.setRemoveOnCancelPolicy(true); // a disarmed timer must not linger for 10 s
        return timer;
    }

    public Connection(InputStream in, OutputStream out, Dispatcher dispatcher, byte[] tokenUtf8,
                      EventHub events, Log log) {
        this.in = in;
        this.out = out;
        this.dispatcher = dispatcher;
        this.token = tokenUtf8;
        this.events = events;
        this.log = log;
        this.handles = new HandleTable(dispatcher.platform());
        // at most MAX_IN_FLIGHT threads, idle ones end after 30 s; admission is bounded by
        // `slots`, so the queue only ever holds a task for the moment a thread frees up
        this.workers = new ThreadPoolExecutor(Limits.MAX_IN_FLIGHT, Limits.MAX_IN_FLIGHT, 30,
                TimeUnit.SECONDS, new LinkedBlockingQueue<Runnable>(),
                DaemonThreads.named("relay-request-"));
        this.workers.allowCoreThreadTimeOut(true);
    }

    /**
     * Called once the hello succeeded; transports use it to lift the read timeout they set
     * as a backstop for the hello ({@link Limits#HELLO_TIMEOUT_MS} +
     * {@link Limits#HELLO_READ_BACKSTOP_MS}), so a silent peer cannot hold a thread.
     */
    public void setOnAuthenticated(Runnable r) {
        onAuthenticated = r;
    }

    /** Overrides {@link Limits#HELLO_TIMEOUT_MS} (tests, HostMain); call before {@link #run}. */
    public void setHelloTimeoutMs(int ms) {
        if (ms <= 0) {
            throw new IllegalArgumentException("hello timeout must be positive, got " + ms);
        }
        helloTimeoutMs = ms;
    }

    @Override
    public void run() {
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(new Runnable() {
            @Override
            public void run() {
                helloTimedOut();
            }
        }, helloTimeoutMs, TimeUnit.MILLISECONDS);
        try {
            if (!handshake()) {
                return;
            }
            while (!closed.get()) {
                Frame f = FrameCodec.read(in);
                if (f == null) {
                    break;
                }
                onFrame(f);
            }
        } catch (FrameCodec.BadFrameException e) {
            if (helloState.get() != HELLO_TIMED_OUT) {
                sendError(0, new RelayException(e.code, e.getMessage()));
            }
        } catch (IOException e) {
            if (!closed.get()) {
                log.info("connection ended: " + e.getMessage());
            }
        } finally {
            watchdog.cancel(false);
            close();
        }
    }

    /** The hello timer fired: a peer that sent no hello gets ERROR 0 AUTH_FAILED and is dropped. */
    private void helloTimedOut() {
        if (!helloState.compareAndSet(HELLO_PENDING, HELLO_TIMED_OUT)) {
            return;
        }
        log.info("no hello within " + helloTimeoutMs + " ms; closing the connection");
        sendError(0, new RelayException(RelayException.AUTH_FAILED, "no hello within "
                + helloTimeoutMs + " ms; send hello as the first request"));
        close();
    }

    /**
     * Reads the first frame, which must be a valid hello; answers it. Checks in the order of
     * docs/relay-protocol.md §3: frame, payload, op, version, then token; every refusal
     * except a broken frame carries the hello's request id and closes the connection.
     */
    private boolean handshake() throws IOException {
        Frame f = FrameCodec.read(in, Limits.MAX_HELLO_PAYLOAD);
        if (f == null || !helloState.compareAndSet(HELLO_PENDING, HELLO_RECEIVED)) {
            return false; // peer gone, or the hello timer already answered
        }
        if (f.type != Frame.REQUEST) {
            throw new FrameCodec.BadFrameException(RelayException.BAD_FRAME,
                    "expected a hello REQUEST, got " + Frame.typeName(f.type));
        }
        if (f.requestId == 0) {
            throw new FrameCodec.BadFrameException(RelayException.BAD_FRAME,
                    "REQUEST with request id 0 (0 is reserved for the connection)");
        }
        TypedBundle req;
        try {
            req = ValueCodec.decodeBundle(f.payload);
        } catch (ValueCodec.CodecException e) {
            sendError(f.requestId, new RelayException(RelayException.BAD_FRAME,
                    "undecodable hello: " + e.getMessage()));
            return false;
        }
        if (!"hello".equals(req.get("op"))) {
            sendError(f.requestId, new RelayException(RelayException.AUTH_FAILED,
                    "the first request must be hello"));
            return false;
        }
        Object argsObj = req.get("args");
        TypedBundle args = argsObj instanceof TypedBundle ? (TypedBundle) argsObj : new TypedBundle();
        Object version = args.get("protocol_version");
        if (!(version instanceof Integer) || (Integer) version != Limits.PROTOCOL_VERSION) {
            sendError(f.requestId, new RelayException(RelayException.UNSUPPORTED_VERSION,
                    "this relay speaks protocol version " + Limits.PROTOCOL_VERSION + ", the client"
                            + " asked for " + Values.describe(version),
                    new TypedBundle().put("supported", new int[] {Limits.PROTOCOL_VERSION})));
            return false;
        }
        Object presented = args.get("token");
        if (!Digests.tokenMatches(presented instanceof String ? (String) presented : null, token)) {
            log.info("hello refused: wrong session token");
            sendError(f.requestId, new RelayException(RelayException.AUTH_FAILED,
                    "wrong session token"));
            return false;
        }
        try {
            wantsEvents = new Args("hello", args).bool("events", false);
        } catch (RelayException e) {
            sendError(f.requestId, e);
            return false;
        }
        Runnable r = onAuthenticated;
        if (r != null) {
            r.run();
        }
        send(Frame.value(Frame.RESPONSE, f.requestId, dispatcher.helloResult()));
        if (wantsEvents && events != null) {
            events.add(this);
        }
        log.info("session opened");
        return true;
    }

    /**
     * One frame after the hello. Frames that break the connection's rules (wrong direction,
     * request id 0, an id still in flight) throw BAD_FRAME: ERROR 0 and close. A sound frame
     * with a bad payload only fails its own request.
     */
    private void onFrame(Frame f) throws IOException {
        if (f.type == Frame.CANCEL) {
            cancel(f.requestId);
            return;
        }
        if (f.type != Frame.REQUEST) {
            throw new FrameCodec.BadFrameException(RelayException.BAD_FRAME,
                    Frame.typeName(f.type) + " frames only travel relay → desktop");
        }
        if (f.requestId == 0) {
            throw new FrameCodec.BadFrameException(RelayException.BAD_FRAME,
                    "REQUEST with request id 0 (0 is reserved for the connection)");
        }
        synchronized (inFlight) {
            if (inFlight.containsKey(f.requestId)) {
                throw new FrameCodec.BadFrameException(RelayException.BAD_FRAME, "request id "
                        + f.requestId + " is already in flight");
            }
        }
        TypedBundle req;
        try {
            req = ValueCodec.decodeBundle(f.payload);
        } catch (ValueCodec.CodecException e) {
            sendError(f.requestId, new RelayException(RelayException.BAD_FRAME,
                    "undecodable request: " + e.getMessage()));
            return;
        }
        Object opObj = req.get("op");
        Object argsObj = req.get("args");
        if (!(opObj instanceof String) || (argsObj != null && !(argsObj instanceof TypedBundle))) {
            sendError(f.requestId, new RelayException(RelayException.BAD_ARGS,
                    "a REQUEST is {op: String, args: Bundle}, got op " + Values.describe(opObj)
                            + " and args " + Values.describe(argsObj)));
            return;
        }
        final String op = (String) opObj;
        final TypedBundle args = argsObj == null ? new TypedBundle() : (TypedBundle) argsObj;
        if ("hello".equals(op)) {
            sendError(f.requestId, new RelayException(RelayException.BAD_ARGS,
                    "hello was already done on this connection"));
            return;
        }
        if (!dispatcher.serves(op)) {
            sendError(f.requestId, new RelayException(RelayException.UNKNOWN_OP,
                    "this relay does not offer the op '" + Values.clip(op, 80)
                            + "'; see the hello's capabilities"));
            return;
        }
        final Request r;
        synchronized (inFlight) {
            if (slots.get() >= Limits.MAX_IN_FLIGHT) {
                r = null;
            } else {
                slots.incrementAndGet();
                r = new Request(f.requestId);
                inFlight.put(f.requestId, r);
            }
        }
        if (r == null) {
            sendError(f.requestId, new RelayException(RelayException.BUSY, "already "
                    + Limits.MAX_IN_FLIGHT + " requests running on this connection (a cancelled"
                    + " or timed-out request keeps its slot until the provider returns); wait"
                    + " for some to finish"));
            return;
        }
        final Runnable workerDone = r.holdSlot();
        // cancel interrupts through the FutureTask; the pool runs a plain Runnable nobody can
        // cancel before it starts, so the slot is given back in every case
        final java.util.concurrent.FutureTask<Void> task = new java.util.concurrent.FutureTask<Void>(
                new Runnable() {
                    @Override
                    public void run() {
                        r.execute(op, args);
                    }
                }, null);
        r.thread = task;
        try {
            workers.execute(new Runnable() {
                @Override
                public void run() {
                    try {
                        task.run();
                    } finally {
                        workerDone.run();
                    }
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            workerDone.run(); // the connection is closing
            r.finishSilently();
        }
        r.releaseInitialHold();
    }

    private void cancel(long requestId) {
        Request r;
        synchronized (inFlight) {
            r = inFlight.get(requestId);
        }
        if (r != null) {
            r.cancel();
        }
    }

    /** Pushes an EVENT frame (request 0). */
    public void emit(TypedBundle event) {
        if (!wantsEvents || closed.get()) {
            return;
        }
        try {
            send(Frame.value(Frame.EVENT, 0, event));
        } catch (IOException e) {
            close();
        } catch (RuntimeException e) {
            // an event over the frame maximum (or unencodable): drop it, never the caller's thread
            log.info("event dropped: " + Errors.describe(e));
        }
    }

    void send(Frame f) throws IOException {
        send(f.type, f.requestId, f.payload, 0, f.payload.length);
    }

    /** Header and payload back to back under the write lock; the payload is not copied. */
    private void send(int type, long requestId, byte[] payload, int off, int len)
            throws IOException {
        if (len > FrameCodec.MAX_FRAME_PAYLOAD) {
            throw new IllegalArgumentException("frame payload of " + len
                    + " bytes exceeds the maximum " + FrameCodec.MAX_FRAME_PAYLOAD);
        }
        byte[] header = FrameCodec.encodeHeader(type, requestId, len);
        synchronized (writeLock) {
            out.write(header);
            out.write(payload, off, len);
            out.flush();
        }
    }

    private void sendError(long requestId, RelayException e) {
        try {
            send(Frame.value(Frame.ERROR, requestId, e.toBundle()));
        } catch (IOException ignored) {
            // the peer is gone; nothing to tell it
        }
    }

    public boolean isClosed() {
        return closed.get();
    }

    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (events != null) {
            events.remove(this);
        }
        List<Request> pending;
        synchronized (inFlight) {
            pending = new ArrayList<Request>(inFlight.values());
        }
        for (Request r : pending) {
            r.cancelSilently();
        }
        workers.shutdownNow();
        handles.closeAll();
        try {
            in.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        try {
            out.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /** One request in flight: exactly one final frame is sent, whoever finishes first. */
    private final class Request implements RequestContext {
        final long id;
        final AtomicBoolean finished = new AtomicBoolean();
        /** Threads still working for this request, plus 1 while it is being admitted. */
        private final AtomicInteger holds = new AtomicInteger(1);
        volatile boolean cancelled;
        volatile java.util.concurrent.Future<?> thread;
        private final List<Closeable> cancelHooks = new ArrayList<Closeable>();

        Request(long id) {
            this.id = id;
        }

        void execute(String op, TypedBundle args) {
            try {
                TypedBundle result = dispatcher.dispatch(op, args, this);
                finish(Frame.value("read_file".equals(op) ? Frame.END : Frame.RESPONSE, id, result));
            } catch (RelayException e) {
                finish(Frame.value(Frame.ERROR, id, e.toBundle()));
            } catch (RuntimeException e) {
                finish(Frame.value(Frame.ERROR, id, Errors.map(e).toBundle()));
            } catch (RequestContext.PeerGone e) {
                finishSilently();
            }
        }

        private void finish(Frame f) {
            if (f.payload.length > FrameCodec.MAX_FRAME_PAYLOAD) {
                // never drop an oversized reply silently: the client would wait out its timeout
                f = Frame.value(Frame.ERROR, id, new RelayException(RelayException.TOO_LARGE,
                        "the reply has " + f.payload.length + " bytes, more than the frame"
                                + " maximum " + FrameCodec.MAX_FRAME_PAYLOAD + "; ask for less (a"
                                + " provider should return large results as a file)",
                        new TypedBundle().put("size", (long) f.payload.length)
                                .put("max_bytes", (long) FrameCodec.MAX_FRAME_PAYLOAD)).toBundle());
            }
            if (finished.compareAndSet(false, true)) {
                synchronized (inFlight) {
                    inFlight.remove(id);
                }
                try {
                    send(f);
                } catch (IOException ignored) {
                    // connection is going away; close() cleans up
                }
            }
        }

        /**
         * One more thread works for this request; run the returned Runnable (once) when it
         * ends. The connection's slot is freed when the last holder ends.
         */
        @Override
        public Runnable holdSlot() {
            holds.incrementAndGet();
            final AtomicBoolean released = new AtomicBoolean();
            return new Runnable() {
                @Override
                public void run() {
                    if (released.compareAndSet(false, true)) {
                        release();
                    }
                }
            };
        }

        void releaseInitialHold() {
            release();
        }

        private void release() {
            if (holds.decrementAndGet() == 0) {
                slots.decrementAndGet();
            }
        }

        void finishSilently() {
            if (finished.compareAndSet(false, true)) {
                synchronized (inFlight) {
                    inFlight.remove(id);
                }
            }
        }

        void cancel() {
            cancelled = true;
            runCancelHooks();
            finish(Frame.value(Frame.ERROR, id, new RelayException(RelayException.CANCELLED,
                    "the request was cancelled").toBundle()));
            if (thread != null) {
                thread.cancel(true);
            }
        }

        void cancelSilently() {
            cancelled = true;
            finishSilently();
            runCancelHooks();
            if (thread != null) {
                thread.cancel(true);
            }
        }

        private void runCancelHooks() {
            List<Closeable> hooks;
            synchronized (cancelHooks) {
                hooks = new ArrayList<Closeable>(cancelHooks);
            }
            for (Closeable c : hooks) {
                try {
                    c.close();
                } catch (IOException ignored) {
                    // best effort
                }
            }
        }

        @Override
        public HandleTable handles() {
            return handles;
        }

        @Override
        public void sendChunk(byte[] data, int off, int len) throws PeerGone {
            if (cancelled || finished.get()) {
                throw new PeerGone("request " + id + " was cancelled");
            }
            try {
                send(Frame.CHUNK, id, data, off, len); // written before this returns: no copy
            } catch (IOException e) {
                throw new PeerGone("connection closed: " + e.getMessage());
            }
        }

        @Override
        public boolean isCancelled() {
            return cancelled || Thread.currentThread().isInterrupted();
        }

        @Override
        public void onCancel(Closeable c) {
            synchronized (cancelHooks) {
                cancelHooks.add(c);
            }
            if (cancelled) {
                runCancelHooks();
            }
        }
    }
}
