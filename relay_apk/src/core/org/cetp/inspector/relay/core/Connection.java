package org.cetp.inspector.relay.core;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;

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
    private final ExecutorService workers;
    private boolean wantsEvents;
    private volatile Runnable onAuthenticated;

    public Connection(InputStream in, OutputStream out, Dispatcher dispatcher, byte[] tokenUtf8,
                      EventHub events, Log log) {
        this.in = in;
        this.out = out;
        this.dispatcher = dispatcher;
        this.token = tokenUtf8;
        this.events = events;
        this.log = log;
        this.handles = new HandleTable(dispatcher.platform());
        this.workers = Executors.newCachedThreadPool(new ThreadFactory() {
            private int n;

            @Override
            public synchronized Thread newThread(Runnable r) {
                Thread t = new Thread(r, "relay-request-" + (++n));
                t.setDaemon(true);
                return t;
            }
        });
    }

    /**
     * Called once the hello succeeded; transports use it to lift the read timeout they set
     * for the hello ({@link Limits#HELLO_TIMEOUT_MS}), so a silent peer cannot hold a thread.
     */
    public void setOnAuthenticated(Runnable r) {
        onAuthenticated = r;
    }

    @Override
    public void run() {
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
            sendError(0, new RelayException(e.code, e.getMessage()));
        } catch (IOException e) {
            if (!closed.get()) {
                log.info("connection ended: " + e.getMessage());
            }
        } finally {
            close();
        }
    }

    /** Reads the first frame, which must be a valid hello; answers it. */
    private boolean handshake() throws IOException {
        Frame f = FrameCodec.read(in);
        if (f == null) {
            return false;
        }
        TypedBundle req;
        try {
            req = requestValue(f);
        } catch (RelayException e) {
            sendError(RelayException.BAD_FRAME.equals(e.code) ? 0 : f.requestId, e);
            return false;
        }
        if (!"hello".equals(req.get("op"))) {
            sendError(f.requestId, new RelayException(RelayException.AUTH_FAILED,
                    "the first request must be hello"));
            return false;
        }
        Object argsObj = req.get("args");
        Args a = new Args("hello", argsObj instanceof TypedBundle ? (TypedBundle) argsObj : null);
        Object version = argsObj instanceof TypedBundle
                ? ((TypedBundle) argsObj).get("protocol_version") : null;
        if (!(version instanceof Integer) || (Integer) version != Limits.PROTOCOL_VERSION) {
            sendError(f.requestId, new RelayException(RelayException.UNSUPPORTED_VERSION,
                    "this relay speaks protocol version " + Limits.PROTOCOL_VERSION + ", the client"
                            + " asked for " + Values.describe(version),
                    new TypedBundle().put("supported", new int[] {Limits.PROTOCOL_VERSION})));
            return false;
        }
        Object presented = argsObj instanceof TypedBundle ? ((TypedBundle) argsObj).get("token") : null;
        if (!Digests.tokenMatches(presented instanceof String ? (String) presented : null, token)) {
            log.info("hello refused: wrong session token");
            sendError(f.requestId, new RelayException(RelayException.AUTH_FAILED,
                    "wrong session token"));
            return false;
        }
        try {
            wantsEvents = a.bool("events", false);
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

    private TypedBundle requestValue(Frame f) throws RelayException {
        if (f.type != Frame.REQUEST) {
            throw new RelayException(RelayException.BAD_FRAME, "expected a REQUEST frame, got "
                    + Frame.typeName(f.type));
        }
        if (f.requestId == 0) {
            throw new RelayException(RelayException.BAD_FRAME, "request id 0 is reserved");
        }
        TypedBundle req;
        try {
            req = ValueCodec.decodeBundle(f.payload);
        } catch (ValueCodec.CodecException e) {
            throw new RelayException(RelayException.BAD_FRAME, "undecodable request: "
                    + e.getMessage());
        }
        if (!(req.get("op") instanceof String)) {
            throw new RelayException(RelayException.BAD_ARGS, "request has no String 'op'");
        }
        Object args = req.get("args");
        if (args != null && !(args instanceof TypedBundle)) {
            throw new RelayException(RelayException.BAD_ARGS, "request 'args' must be a Bundle");
        }
        return req;
    }

    private void onFrame(Frame f) throws IOException {
        if (f.type == Frame.CANCEL) {
            cancel(f.requestId);
            return;
        }
        TypedBundle req;
        try {
            req = requestValue(f);
        } catch (RelayException e) {
            if (RelayException.BAD_FRAME.equals(e.code)) {
                sendError(0, e);
                closed.set(true);
            } else {
                sendError(f.requestId, e);
            }
            return;
        }
        final String op = (String) req.get("op");
        final TypedBundle args = (TypedBundle) req.get("args");
        if ("hello".equals(op)) {
            sendError(f.requestId, new RelayException(RelayException.BAD_ARGS,
                    "hello was already done on this connection"));
            return;
        }
        final Request r;
        synchronized (inFlight) {
            if (inFlight.containsKey(f.requestId)) {
                sendError(f.requestId, new RelayException(RelayException.BAD_ARGS, "request id "
                        + f.requestId + " is already in flight"));
                return;
            }
            if (inFlight.size() >= Limits.MAX_IN_FLIGHT) {
                sendError(f.requestId, new RelayException(RelayException.BUSY, "already "
                        + Limits.MAX_IN_FLIGHT + " requests in flight; wait for some to finish"));
                return;
            }
            r = new Request(f.requestId);
            inFlight.put(f.requestId, r);
        }
        r.thread = workers.submit(new Runnable() {
            @Override
            public void run() {
                r.execute(op, args);
            }
        });
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
        }
    }

    void send(Frame f) throws IOException {
        byte[] bytes = FrameCodec.encode(f);
        synchronized (writeLock) {
            out.write(bytes);
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

        private void finishSilently() {
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
            byte[] copy = new byte[len];
            System.arraycopy(data, off, copy, 0, len);
            try {
                send(new Frame(Frame.CHUNK, id, copy));
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
