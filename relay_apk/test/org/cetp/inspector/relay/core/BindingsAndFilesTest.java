package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

import org.junit.Test;

/** Null bindings before API 28 and file results that fail at EOF (issue 10, findings 7, 9). */
public class BindingsAndFilesTest {
    @Test
    public void beforeApi28SilenceAfterABindIsALikelyNullBindingNotATimeout() {
        RelayException e = Bindings.noConnection(27, "svc", 3000);
        assertEquals(RelayException.IPC_FAILED, e.code);
        assertEquals("likely", e.details.get("null_binding"));
        assertTrue(e.getMessage(), e.getMessage().contains("onBind returns null"));
        assertEquals(RelayException.TIMEOUT, Bindings.noConnection(28, "svc", 3000).code);
        RelayException n = Bindings.nullBinding("svc");
        assertEquals(RelayException.IPC_FAILED, n.code);
        assertEquals(Boolean.TRUE, n.details.get("null_binding"));
    }

    /** Like a reliable pipe whose writer died: the bytes so far, then an error at EOF. */
    private static final class DiesAtEof extends InputStream {
        private final InputStream data;

        DiesAtEof(byte[] bytes) {
            data = new ByteArrayInputStream(bytes);
        }

        @Override
        public int read() throws IOException {
            int r = data.read();
            if (r < 0) {
                throw new IOException("Remote side is dead"); // ParcelFileDescriptor.checkError
            }
            return r;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int r = data.read(b, off, len);
            if (r < 0) {
                throw new IOException("Remote side is dead");
            }
            return r;
        }
    }

    @Test
    public void aProviderDyingMidStreamIsIpcFailedNotACleanShortEnd() throws Exception {
        StubPlatform p = new StubPlatform();
        p.file = new Platform.FileSource(new DiesAtEof(new byte[1000]), -1);
        StubPlatform.Context ctx = new StubPlatform.Context(p);
        String id = ctx.handles.register("fd", new Object());
        try {
            new Dispatcher(p).dispatch("read_file", new TypedBundle().put("handle", id)
                    .put("max_bytes", 1L << 20).put("chunk_size", 400), ctx);
            fail("a stream that failed at EOF must not end cleanly");
        } catch (RelayException e) {
            assertEquals(RelayException.IPC_FAILED, e.code);
            assertTrue(e.getMessage(), e.getMessage().contains("Remote side is dead"));
        }
        assertEquals(2, ctx.chunks.size()); // 400 + 400 sent; the rest never got an END
    }

    @Test
    public void aCleanEofStillEnds() throws Exception {
        StubPlatform p = new StubPlatform();
        p.file = new Platform.FileSource(new ByteArrayInputStream(new byte[1000]), 1000);
        StubPlatform.Context ctx = new StubPlatform.Context(p);
        String id = ctx.handles.register("fd", new Object());
        TypedBundle end = new Dispatcher(p).dispatch("read_file", new TypedBundle()
                .put("handle", id).put("max_bytes", 1L << 20).put("chunk_size", 400), ctx);
        assertEquals(1000L, end.get("size"));
    }
}
