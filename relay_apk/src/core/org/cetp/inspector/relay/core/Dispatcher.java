package org.cetp.inspector.relay.core;

import java.io.Closeable;
import java.io.IOException;
import java.security.MessageDigest;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The whitelist of operations (docs/relay-protocol.md §4): checks arguments, calls the
 * {@link Platform} with a bound on time, and shapes results. There is no generic
 * reflection or code loading: an op not listed here is UNKNOWN_OP.
 */
public final class Dispatcher {
    /** Ops this relay serves, in the order the hello lists them. */
    public static final String[] OPS = {
        "ping", "discover", "call", "read_file", "close_handle", "launch_pending_intent",
        "bind_transact", "broadcast", "start_activity", "read_resource", "wake_provider",
    };
    private final Platform platform;
    /**
     * Platform calls, at most {@link Limits#MAX_IPC_CALLS} threads (idle ones end after 30 s).
     * {@link #ipcSlots} admits a call only when a thread is free, so the queue stays empty.
     */
    private final ThreadPoolExecutor ipc = new ThreadPoolExecutor(Limits.MAX_IPC_CALLS,
            Limits.MAX_IPC_CALLS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<Runnable>(),
            DaemonThreads.named("relay-ipc-"));
    /** Free IPC threads; taken when a call starts, given back when its thread really ends. */
    private final Semaphore ipcSlots = new Semaphore(Limits.MAX_IPC_CALLS);

    public Dispatcher(Platform platform) {
        this.platform = platform;
        ipc.allowCoreThreadTimeOut(true);
    }

    public Platform platform() {
        return platform;
    }

    /** Whether {@code op} is one this relay serves (everything else is UNKNOWN_OP). */
    public boolean serves(String op) {
        for (String o : OPS) {
            if (o.equals(op)) {
                return true;
            }
        }
        return false;
    }

    /** The hello's capabilities: exactly the ops served (docs/relay-protocol.md §3). */
    public String[] capabilities() {
        return OPS.clone();
    }

    /** The hello result (docs/relay-protocol.md §3). */
    public TypedBundle helloResult() {
        Platform.Identity id = platform.identity();
        TypedBundle hello = new TypedBundle()
                .put("protocol_version", Limits.PROTOCOL_VERSION)
                .put("relay_version_code", id.versionCode)
                .put("relay_version_name", id.versionName)
                .put("capabilities", capabilities())
                .put("caller_package", id.callerPackage)
                .put("caller_uid", id.callerUid)
                .put("caller_cert_sha256", id.callerCertSha256)
                .put("device", id.device);
        // optional (added in versionCode 3): what the relay may do, so the desktop can say
        // why a provider answers SECURITY (e.g. ACCESS_TOOLS defined after the relay install)
        if (id.requestedPermissions != null && id.heldPermissions != null) {
            hello.put("requested_permissions", id.requestedPermissions.clone())
                    .put("held_permissions", id.heldPermissions.clone());
        }
        return hello;
    }

    /**
     * Runs one op. Returns the RESPONSE value, or for read_file the END value after the
     * chunks were sent through {@code ctx}.
     */
    public TypedBundle dispatch(String op, TypedBundle rawArgs, final RequestContext ctx)
            throws RelayException, RequestContext.PeerGone {
        final Args a = new Args(op, rawArgs);
        // every op takes timeout_ms (docs/relay-protocol.md §4): a bad one is BAD_ARGS
        final int timeout = a.timeoutMs();
        try {
            if ("ping".equals(op)) {
                return new TypedBundle().put("time_ms", System.currentTimeMillis());
            } else if ("discover".equals(op)) {
                final String pkg = a.optString("package");
                TypedBundle[] records = bounded(op, timeout, ctx,
                        new Callable<TypedBundle[]>() {
                            @Override
                            public TypedBundle[] call() throws Exception {
                                return platform.discover(pkg);
                            }
                        });
                return new TypedBundle().put("packages", records);
            } else if ("call".equals(op)) {
                final String authority = a.string("authority");
                final String method = a.string("method");
                final String arg = a.optString("arg");
                final TypedBundle extras = a.optBundle("extras");
                TypedBundle reply = bounded(op, timeout, ctx, new Callable<TypedBundle>() {
                    @Override
                    public TypedBundle call() throws Exception {
                        return platform.call(authority, method, arg, extras, timeout,
                                ctx.handles());
                    }
                });
                return new TypedBundle().put("reply", reply);
            } else if ("read_file".equals(op)) {
                return readFile(a, ctx);
            } else if ("close_handle".equals(op)) {
                return new TypedBundle().put("closed", ctx.handles().close(a.string("handle")));
            } else if ("launch_pending_intent".equals(op)) {
                final String handle = a.string("handle");
                final Object pi = ctx.handles().get(handle);
                Platform.ActivityResult r;
                try {
                    r = bounded(op, timeout, ctx, new Callable<Platform.ActivityResult>() {
                        @Override
                        public Platform.ActivityResult call() throws Exception {
                            return platform.launchPendingIntent(pi, timeout);
                        }
                    });
                } catch (RelayException e) {
                    if (PendingIntents.isCancelled(e)) {
                        ctx.handles().close(handle); // dead for good: make the caller re-resolve
                    }
                    throw e;
                }
                TypedBundle out = new TypedBundle().put("result_code", r.resultCode)
                        .put("data", r.data);
                if (r.outcome != null) {
                    out.put("outcome", r.outcome).put("elapsed_ms", r.elapsedMs)
                            .put("detail", PendingIntents.describe(r.outcome, r.elapsedMs));
                }
                return out;
            } else if ("bind_transact".equals(op)) {
                final String pkg = a.string("package");
                final String action = a.string("action");
                final String descriptor = a.string("descriptor");
                final int code = a.integer("code");
                final String[] strings = a.strings("strings");
                Platform.TransactResult r = bounded(op, timeout, ctx,
                        new Callable<Platform.TransactResult>() {
                            @Override
                            public Platform.TransactResult call() throws Exception {
                                return platform.bindTransact(pkg, action, descriptor, code,
                                        strings, timeout);
                            }
                        });
                return new TypedBundle().put("exception", r.exception).put("reply", r.reply);
            } else if ("broadcast".equals(op)) {
                final String pkg = a.string("package");
                final String action = a.string("action");
                final TypedBundle extras = a.optBundle("extras");
                // the extension answers on whatever action it is given: make it unguessable
                final String replyAction = Broadcasts.replyAction(a.string("reply_action"));
                final boolean includeStopped = a.bool("include_stopped", false);
                // the platform reports a missing reply as timed_out; allow it a margin
                Platform.BroadcastResult r = bounded(op, timeout + 5000, ctx,
                        new Callable<Platform.BroadcastResult>() {
                            @Override
                            public Platform.BroadcastResult call() throws Exception {
                                return platform.broadcast(pkg, action,
                                        extras == null ? new TypedBundle() : extras,
                                        replyAction, includeStopped, timeout);
                            }
                        });
                TypedBundle out = new TypedBundle().put("reply", r.reply)
                        .put("timed_out", r.timedOut).put("reply_action", replyAction)
                        .put("include_stopped", includeStopped);
                if (r.targetStopped != null) {
                    out.put("target_stopped", r.targetStopped.booleanValue());
                }
                if (r.timedOut) {
                    out.put("detail", Broadcasts.explainTimeout(r.targetStopped, includeStopped,
                            timeout));
                }
                return out;
            } else if ("start_activity".equals(op)) {
                final String pkg = a.string("package");
                final String action = a.string("action");
                final TypedBundle extras = a.optBundle("extras");
                Platform.ActivityStart r = bounded(op, timeout, ctx,
                        new Callable<Platform.ActivityStart>() {
                            @Override
                            public Platform.ActivityStart call() throws Exception {
                                return platform.startActivity(pkg, action,
                                        extras == null ? new TypedBundle() : extras);
                            }
                        });
                return new TypedBundle().put("launched", r.launched).put("component", r.component);
            } else if ("read_resource".equals(op)) {
                final String pkg = a.string("package");
                final int resId = a.integer("resource_id");
                final int max = a.optInt("max_bytes", Limits.MAX_RESOURCE_BYTES);
                if (max <= 0 || max > Limits.MAX_RESOURCE_BYTES) {
                    throw new RelayException(RelayException.BAD_ARGS, op + ": max_bytes must be 1 … "
                            + Limits.MAX_RESOURCE_BYTES + ", got " + max);
                }
                Platform.ResourceData r = bounded(op, timeout, ctx,
                        new Callable<Platform.ResourceData>() {
                            @Override
                            public Platform.ResourceData call() throws Exception {
                                return platform.readResource(pkg, resId, max);
                            }
                        });
                if (r.data.length > max) {
                    throw new RelayException(RelayException.TOO_LARGE, "resource 0x"
                            + Integer.toHexString(resId) + " is larger than max_bytes " + max);
                }
                return new TypedBundle().put("data", r.data).put("name", r.name);
            } else if ("wake_provider".equals(op)) {
                final String authority = a.string("authority");
                final String pkg = a.string("package");
                final String mode = a.string("mode");
                if (!"acquire".equals(mode) && !"launch".equals(mode)) {
                    throw new RelayException(RelayException.BAD_ARGS,
                            op + ": mode must be \"acquire\" or \"launch\", got \"" + mode + "\"");
                }
                Platform.WakeResult r = bounded(op, timeout, ctx, new Callable<Platform.WakeResult>() {
                    @Override
                    public Platform.WakeResult call() throws Exception {
                        return platform.wakeProvider(authority, pkg, mode, timeout);
                    }
                });
                return new TypedBundle().put("ok", r.ok).put("detail", r.detail);
            }
        } catch (RelayException e) {
            throw e;
        } catch (RequestContext.PeerGone e) {
            throw e;
        } catch (Exception e) {
            throw Errors.map(e);
        }
        throw new RelayException(RelayException.UNKNOWN_OP, "this relay does not offer the op '"
                + op + "'");
    }

    /**
     * Runs a platform call on an IPC thread and gives up after {@code timeoutMs}. Giving up
     * does not end the call (a binder transaction ignores interrupts): its IPC thread and the
     * request's slot on its connection stay taken until the platform returns.
     */
    <T> T bounded(String op, int timeoutMs, RequestContext ctx, final Callable<T> task)
            throws RelayException {
        if (!ipcSlots.tryAcquire()) {
            throw new RelayException(RelayException.BUSY, "the relay already runs "
                    + Limits.MAX_IPC_CALLS + " platform calls (timed-out or cancelled calls keep"
                    + " theirs until the provider returns); retry later");
        }
        final Runnable slotDone = ctx.holdSlot();
        // the pool runs a plain Runnable, which nobody can cancel before it starts: the slots
        // are given back whether the call ran, was cancelled first, or is still stuck
        final FutureTask<T> f = new FutureTask<T>(task);
        try {
            ipc.execute(new Runnable() {
                @Override
                public void run() {
                    try {
                        f.run();
                    } finally {
                        ipcSlots.release();
                        slotDone.run();
                    }
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            ipcSlots.release();
            slotDone.run();
            throw new RelayException(RelayException.CANCELLED, "the relay is shutting down");
        }
        try {
            return f.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new RelayException(RelayException.TIMEOUT, op + " did not complete within "
                    + timeoutMs + " ms");
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            throw new RelayException(RelayException.CANCELLED, "the request was cancelled");
        } catch (ExecutionException e) {
            throw Errors.map(e.getCause() == null ? e : e.getCause());
        }
    }

    private TypedBundle readFile(Args a, RequestContext ctx) throws Exception {
        String handle = a.string("handle");
        long max = a.longValue("max_bytes");
        int chunk = a.optInt("chunk_size", Limits.DEFAULT_CHUNK);
        if (chunk <= 0 || chunk > FrameCodec.MAX_CHUNK) {
            throw new RelayException(RelayException.BAD_ARGS, "read_file: chunk_size must be 1 … "
                    + FrameCodec.MAX_CHUNK + ", got " + chunk);
        }
        if (max < 0 || max > Limits.MAX_READ_BYTES) {
            throw new RelayException(RelayException.BAD_ARGS, "read_file: max_bytes must be 0 … "
                    + Limits.MAX_READ_BYTES + ", got " + max);
        }
        final Platform.FileSource src = platform.openFile(ctx.handles().get(handle));
        ctx.onCancel(new Closeable() {
            @Override
            public void close() {
                src.close();
            }
        });
        try {
            if (src.size > max) {
                throw new RelayException(RelayException.TOO_LARGE, "the file has " + src.size
                        + " bytes, more than max_bytes " + max);
            }
            MessageDigest md = Digests.sha256();
            byte[] buf = new byte[chunk];
            long total = 0;
            while (true) {
                int n = FrameCodec.readFully(src.stream, buf, 0, chunk);
                if (ctx.isCancelled()) {
                    throw new RelayException(RelayException.CANCELLED, "the request was cancelled");
                }
                if (n <= 0) {
                    break;
                }
                total += n;
                if (total > max) {
                    throw new RelayException(RelayException.TOO_LARGE, "the file is larger than"
                            + " max_bytes " + max);
                }
                md.update(buf, 0, n);
                ctx.sendChunk(buf, 0, n);
                if (n < chunk) {
                    break;
                }
            }
            return new TypedBundle().put("size", total).put("sha256", Digests.hex(md.digest()));
        } catch (RequestContext.PeerGone e) {
            throw e;
        } catch (IOException e) {
            if (ctx.isCancelled()) {
                throw new RelayException(RelayException.CANCELLED, "the request was cancelled");
            }
            throw new RelayException(RelayException.IPC_FAILED, "reading the file failed: "
                    + Errors.describe(e));
        } finally {
            src.close();
        }
    }

    public void shutdown() {
        ipc.shutdownNow();
    }
}
