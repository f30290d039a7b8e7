package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.util.ArrayList;
import java.util.List;

import org.cetp.inspector.relay.host.FakePlatform;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** The whole server core over in-memory pipes, with the host test platform behind it. */
public class ConnectionTest {
    private static final String TOKEN = "0123456789abcdef0123";
    private InputStream fromRelay;
    private OutputStream toRelay;
    private Thread thread;
    private final List<String> logs = new ArrayList<String>();

    @Before
    public void start() throws IOException {
        PipedInputStream relayIn = new PipedInputStream(1 << 20);
        toRelay = new PipedOutputStream(relayIn);
        PipedInputStream clientIn = new PipedInputStream(1 << 20);
        PipedOutputStream relayOut = new PipedOutputStream(clientIn);
        fromRelay = clientIn;
        FakePlatform platform = new FakePlatform();
        EventHub hub = new EventHub();
        platform.setEventListener(hub);
        final Connection c = new Connection(relayIn, relayOut, new Dispatcher(platform),
                Utf8.encode(TOKEN), hub, new Connection.Log() {
                    @Override
                    public void info(String message) {
                        synchronized (logs) {
                            logs.add(message);
                        }
                    }
                });
        thread = new Thread(c, "connection-under-test");
        thread.start();
    }

    @After
    public void stop() throws Exception {
        toRelay.close();
        thread.join(5000);
        synchronized (logs) {
            for (String l : logs) {
                assertTrue("the token must never be logged: " + l, !l.contains(TOKEN));
            }
        }
    }

    private void send(int type, long id, TypedBundle value) throws IOException {
        FrameCodec.write(toRelay, value == null ? new Frame(type, id, null) : Frame.value(type, id, value));
    }

    private void request(long id, String op, TypedBundle args) throws IOException {
        send(Frame.REQUEST, id, new TypedBundle().put("op", op).put("args", args));
    }

    private Frame next() throws IOException {
        return FrameCodec.read(fromRelay);
    }

    private TypedBundle reply(long id, int type) throws Exception {
        Frame f = next();
        assertEquals("request id", id, f.requestId);
        if (f.type != type) {
            throw new AssertionError("expected " + Frame.typeName(type) + ", got " + Frame.typeName(f.type)
                    + " " + ValueCodec.decode(f.payload));
        }
        return ValueCodec.decodeBundle(f.payload);
    }

    private TypedBundle hello(String token, boolean events) {
        return new TypedBundle().put("protocol_version", 1).put("token", token)
                .put("client", "junit").put("events", events);
    }

    private void helloOk() throws Exception {
        request(1, "hello", hello(TOKEN, true));
        reply(1, Frame.RESPONSE);
    }

    private static TypedBundle call(String method, TypedBundle extras) {
        return new TypedBundle().put("authority", FakePlatform.AUTHORITY).put("method", method)
                .put("extras", extras);
    }

    @Test
    public void helloReportsVersionCapabilitiesAndIdentity() throws Exception {
        request(1, "hello", hello(TOKEN, false));
        TypedBundle r = reply(1, Frame.RESPONSE);
        assertEquals(1, r.get("protocol_version"));
        assertEquals("org.cetp.inspector.relay", r.get("caller_package"));
        List<String> caps = java.util.Arrays.asList((String[]) r.get("capabilities"));
        assertTrue(caps.contains("call"));
        assertTrue(caps.contains("read_file"));
        assertTrue(((TypedBundle) r.get("device")).get("sdk_int") instanceof Integer);
    }

    @Test
    public void wrongTokenIsRefusedAndTheConnectionClosed() throws Exception {
        request(1, "hello", hello("not-the-token-at-all", false));
        assertEquals("AUTH_FAILED", reply(1, Frame.ERROR).get("code"));
        assertNull(next());
    }

    @Test
    public void firstRequestMustBeHello() throws Exception {
        request(5, "ping", new TypedBundle());
        assertEquals("AUTH_FAILED", reply(5, Frame.ERROR).get("code"));
        assertNull(next());
    }

    @Test
    public void unsupportedVersionListsTheSupportedOnes() throws Exception {
        request(1, "hello", hello(TOKEN, false).put("protocol_version", 2));
        TypedBundle e = reply(1, Frame.ERROR);
        assertEquals("UNSUPPORTED_VERSION", e.get("code"));
        assertArrayEquals(new int[] {1}, (int[]) ((TypedBundle) e.get("details")).get("supported"));
        assertNull(next());
    }

    @Test
    public void unknownOpIsAnErrorAndTheConnectionLives() throws Exception {
        helloOk();
        request(2, "load_dex", new TypedBundle());
        assertEquals("UNKNOWN_OP", reply(2, Frame.ERROR).get("code"));
        request(3, "ping", null);
        assertTrue(reply(3, Frame.RESPONSE).get("time_ms") instanceof Long);
    }

    @Test
    public void callPassesTypedBundlesBothWays() throws Exception {
        helloOk();
        TypedBundle extras = new TypedBundle().put("n", 5).put("l", 5L).put("nested",
                new TypedBundle().put("flag", true));
        request(2, "call", call("echo", extras).put("arg", "x"));
        TypedBundle reply = (TypedBundle) reply(2, Frame.RESPONSE).get("reply");
        assertEquals(extras, reply.get("extras"));
        assertEquals("x", reply.get("arg"));
        assertEquals(new Handles.Unsupported("android.graphics.Bitmap"), reply.get("unsupported"));
    }

    @Test
    public void nullReplyStaysNull() throws Exception {
        helloOk();
        request(2, "call", call("null_reply", null));
        TypedBundle r = reply(2, Frame.RESPONSE);
        assertTrue(r.containsKey("reply"));
        assertNull(r.get("reply"));
    }

    @Test
    public void fileHandleStreamsInChunksWithDigest() throws Exception {
        helloOk();
        request(2, "call", call("large_result", null));
        TypedBundle reply = (TypedBundle) reply(2, Frame.RESPONSE).get("reply");
        Handles.FileRef fd = (Handles.FileRef) reply.get("result_fd");
        assertEquals(FakePlatform.LARGE_FILE.length, fd.size);
        request(3, "read_file", new TypedBundle().put("handle", fd.id).put("max_bytes", 1L << 20)
                .put("chunk_size", 100000));
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        Frame f;
        int chunks = 0;
        while ((f = next()).type == Frame.CHUNK) {
            assertTrue(f.payload.length <= 100000);
            got.write(f.payload);
            chunks++;
        }
        assertEquals(Frame.END, f.type);
        TypedBundle end = ValueCodec.decodeBundle(f.payload);
        assertEquals("300 000 bytes in 100 000-byte chunks", 3, chunks);
        assertArrayEquals(FakePlatform.LARGE_FILE, got.toByteArray());
        assertEquals((long) FakePlatform.LARGE_FILE.length, end.get("size"));
        assertEquals(Digests.sha256Hex(FakePlatform.LARGE_FILE), end.get("sha256"));
    }

    @Test
    public void fileLargerThanMaxBytesIsTooLarge() throws Exception {
        helloOk();
        request(2, "call", call("large_result", null));
        Handles.FileRef fd = (Handles.FileRef) ((TypedBundle) reply(2, Frame.RESPONSE).get("reply"))
                .get("result_fd");
        request(3, "read_file", new TypedBundle().put("handle", fd.id).put("max_bytes", 1000L));
        assertEquals("TOO_LARGE", reply(3, Frame.ERROR).get("code"));
    }

    @Test
    public void closedHandleIsNotFound() throws Exception {
        helloOk();
        request(2, "call", call("large_result", null));
        Handles.FileRef fd = (Handles.FileRef) ((TypedBundle) reply(2, Frame.RESPONSE).get("reply"))
                .get("result_fd");
        request(3, "close_handle", new TypedBundle().put("handle", fd.id));
        assertEquals(Boolean.TRUE, reply(3, Frame.RESPONSE).get("closed"));
        request(4, "read_file", new TypedBundle().put("handle", fd.id).put("max_bytes", 1L << 20));
        assertEquals("NOT_FOUND", reply(4, Frame.ERROR).get("code"));
    }

    @Test
    public void pendingIntentHandleLaunchesWithResult() throws Exception {
        helloOk();
        request(2, "call", call("needs_approval", null));
        Handles.PendingIntentRef pi = (Handles.PendingIntentRef)
                ((TypedBundle) reply(2, Frame.RESPONSE).get("reply")).get("resolution");
        assertEquals(15, pi.flags);
        request(3, "launch_pending_intent", new TypedBundle().put("handle", pi.id));
        TypedBundle r = reply(3, Frame.RESPONSE);
        assertEquals(-1, r.get("result_code"));
        assertEquals(Boolean.TRUE, ((TypedBundle) r.get("data")).get("approved"));
    }

    @Test
    public void errorsMapToRelayCodes() throws Exception {
        helloOk();
        request(2, "call", call("forbidden", null));
        assertEquals("SECURITY", reply(2, Frame.ERROR).get("code"));
        request(3, "call", call("x", null).put("authority", "no.such.authority"));
        assertEquals("NOT_FOUND", reply(3, Frame.ERROR).get("code"));
        request(4, "call", new TypedBundle().put("method", "x"));
        TypedBundle bad = reply(4, Frame.ERROR);
        assertEquals("BAD_ARGS", bad.get("code"));
        assertTrue(((String) bad.get("message")).contains("authority"));
        request(5, "call", call("slow", null).put("timeout_ms", 200));
        assertEquals("TIMEOUT", reply(5, Frame.ERROR).get("code"));
    }

    @Test
    public void cancelEndsARequestWithCancelled() throws Exception {
        helloOk();
        request(7, "call", call("slow", null).put("timeout_ms", 60000));
        send(Frame.CANCEL, 7, null);
        assertEquals("CANCELLED", reply(7, Frame.ERROR).get("code"));
        request(8, "ping", null);
        reply(8, Frame.RESPONSE);
    }

    @Test
    public void repliesMayArriveOutOfOrder() throws Exception {
        helloOk();
        request(10, "call", call("slow", null).put("timeout_ms", 400));
        request(11, "ping", null);
        assertEquals(11, next().requestId);
        assertEquals(10, next().requestId);
    }

    @Test
    public void packageEventsArePushedWhenAskedFor() throws Exception {
        helloOk();
        request(2, "call", call("emit_package_event", null));
        Frame first = next();
        Frame second = next();
        Frame event = first.type == Frame.EVENT ? first : second;
        assertEquals(Frame.EVENT, event.type);
        assertEquals(0, event.requestId);
        assertEquals("package_changed", ValueCodec.decodeBundle(event.payload).get("event"));
    }

    @Test
    public void discoverListsPackagesAndFiltersByName() throws Exception {
        helloOk();
        request(2, "discover", new TypedBundle());
        TypedBundle[] all = (TypedBundle[]) reply(2, Frame.RESPONSE).get("packages");
        assertEquals(2, all.length);
        request(3, "discover", new TypedBundle().put("package", FakePlatform.EXTENSION_PACKAGE));
        TypedBundle[] one = (TypedBundle[]) reply(3, Frame.RESPONSE).get("packages");
        assertEquals(1, one.length);
        assertEquals(FakePlatform.EXTENSION_PACKAGE, one[0].get("package"));
        request(4, "discover", new TypedBundle().put("package", "com.example.absent"));
        assertEquals(0, ((TypedBundle[]) reply(4, Frame.RESPONSE).get("packages")).length);
    }

    @Test
    public void argumentBoundsAreChecked() throws Exception {
        helloOk();
        request(2, "call", call("list_tools", null).put("timeout_ms", 120001));
        assertEquals("BAD_ARGS", reply(2, Frame.ERROR).get("code"));
        request(3, "call", call("list_tools", null).put("timeout_ms", 5L));
        assertEquals("an int arg sent as long is refused", "BAD_ARGS", reply(3, Frame.ERROR).get("code"));
        request(4, "read_file", new TypedBundle().put("handle", "x").put("max_bytes", 10L)
                .put("chunk_size", FrameCodec.MAX_CHUNK + 1));
        assertEquals("BAD_ARGS", reply(4, Frame.ERROR).get("code"));
        request(5, "wake_provider", new TypedBundle().put("authority", FakePlatform.AUTHORITY)
                .put("package", FakePlatform.PROVIDER_PACKAGE).put("mode", "reboot"));
        assertEquals("BAD_ARGS", reply(5, Frame.ERROR).get("code"));
    }

    @Test
    public void tooManyRequestsInFlightIsBusy() throws Exception {
        helloOk();
        for (int i = 0; i < Limits.MAX_IN_FLIGHT; i++) {
            request(100 + i, "call", call("slow", null).put("timeout_ms", 60000));
        }
        request(200, "ping", null);
        assertEquals("BUSY", reply(200, Frame.ERROR).get("code"));
        for (int i = 0; i < Limits.MAX_IN_FLIGHT; i++) {
            send(Frame.CANCEL, 100 + i, null);
        }
        for (int i = 0; i < Limits.MAX_IN_FLIGHT; i++) {
            Frame f = next();
            assertEquals(Frame.ERROR, f.type);
            assertEquals("CANCELLED", ValueCodec.decodeBundle(f.payload).get("code"));
        }
        request(201, "ping", null);
        reply(201, Frame.RESPONSE);
    }

    @Test
    public void badFrameIsReportedOnRequestZeroAndCloses() throws Exception {
        helloOk();
        byte[] garbage = FrameCodec.encodeHeader(Frame.REQUEST, 3, 0);
        garbage[0] = 'X';
        toRelay.write(garbage);
        toRelay.flush();
        TypedBundle e = reply(0, Frame.ERROR);
        assertEquals("BAD_FRAME", e.get("code"));
        assertNull(next());
    }
}
