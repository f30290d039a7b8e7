package org.cetp.inspector.relay.core;

import java.io.Closeable;
import java.util.ArrayList;
import java.util.List;

/**
 * A Platform whose answers a test sets field by field (everything else is unsupported), and a
 * RequestContext that records chunks: for Dispatcher rules FakePlatform cannot provoke.
 */
class StubPlatform implements Platform {
    Exception launchFailure;
    ActivityResult launchResult;
    FileSource file;

    @Override
    public Identity identity() {
        return new Identity("stub", 1, new String[0], 1, "stub", new TypedBundle());
    }

    @Override
    public TypedBundle[] discover(String pkg) {
        throw new UnsupportedOperationException();
    }

    @Override
    public TypedBundle call(String authority, String method, String arg, TypedBundle extras,
                            int timeoutMs, HandleTable handles) {
        throw new UnsupportedOperationException();
    }

    @Override
    public FileSource openFile(Object nativeHandle) {
        return file;
    }

    @Override
    public ActivityResult launchPendingIntent(Object nativeHandle, int timeoutMs) throws Exception {
        if (launchFailure != null) {
            throw launchFailure;
        }
        return launchResult;
    }

    @Override
    public TransactResult bindTransact(String pkg, String action, String descriptor, int code,
                                       String[] strings, int timeoutMs) {
        throw new UnsupportedOperationException();
    }

    @Override
    public BroadcastResult broadcast(String pkg, String action, TypedBundle extras,
                                     String replyAction, boolean includeStopped, int timeoutMs) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ActivityStart startActivity(String pkg, String action, TypedBundle extras) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ResourceData readResource(String pkg, int resourceId, int maxBytes) {
        throw new UnsupportedOperationException();
    }

    @Override
    public WakeResult wakeProvider(String authority, String pkg, String mode, int timeoutMs) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void release(Object nativeHandle) {
    }

    @Override
    public void setEventListener(EventListener listener) {
    }

    /** A request context over a fresh handle table; CHUNK payloads are kept in {@link #chunks}. */
    static final class Context implements RequestContext {
        final HandleTable handles;
        final List<byte[]> chunks = new ArrayList<byte[]>();

        Context(Platform p) {
            handles = new HandleTable(p);
        }

        @Override
        public HandleTable handles() {
            return handles;
        }

        @Override
        public void sendChunk(byte[] data, int off, int len) {
            byte[] b = new byte[len];
            System.arraycopy(data, off, b, 0, len);
            chunks.add(b);
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public void onCancel(Closeable c) {
        }

        @Override
        public Runnable holdSlot() {
            return new Runnable() {
                @Override
                public void run() {
                }
            };
        }
    }
}
