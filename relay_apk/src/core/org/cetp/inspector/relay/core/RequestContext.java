package org.cetp.inspector.relay.core;

import java.io.Closeable;
import java.io.IOException;

/** What an operation sees of its request: handles, streaming output and cancellation. */
public interface RequestContext {
    HandleTable handles();

    /** Sends one CHUNK frame for this request (1 … 262 144 bytes). */
    void sendChunk(byte[] data, int off, int len) throws PeerGone;

    boolean isCancelled();

    /** Registers something to close when the request is cancelled (e.g. a blocking stream). */
    void onCancel(Closeable c);

    /**
     * Registers one more thread working for this request (e.g. a platform call on an IPC
     * thread). The request's in-flight slot stays taken, even after its reply, cancel or
     * timeout, until every such thread ran the returned Runnable. Run it exactly once.
     */
    Runnable holdSlot();

    /** The request was cancelled or the connection closed: stop, send nothing more. */
    final class PeerGone extends IOException {
        private static final long serialVersionUID = 1L;

        public PeerGone(String message) {
            super(message);
        }
    }
}
