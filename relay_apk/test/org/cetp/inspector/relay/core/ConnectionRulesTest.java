package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.List;

import org.cetp.inspector.relay.host.FakePlatform;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The connection rules of docs/relay-protocol.md §1, §3 and §4 as tightened for the final
 * protocol: which mistakes close the connection (ERROR request 0) and which only fail one
 * request, the hello's order of checks and timer, capabilities, timeouts and read_file.
 */
public class ConnectionRulesTest {
    private PipeRelay relay;

    @Before
    public void start() throws Exception {
        relay = new PipeRelay(300);
    }

    @After
    public void stop() throws Exception {
        relay.stop();
    }

    private static TypedBundle slowCall() {
        return new TypedBundle().put("authority", FakePlatform.AUTHORITY).put("method", "slow")
                .put("timeout_ms", 60000);
    }

    private void assertClosedWithBadFrame() throws Exception {
        assertEquals("BAD_FRAME", relay.error(0));
        assertNull("the connection must be closed", relay.next());
    }

    // ---------------------------------------------------------------- connection-level

    @Test(timeout = 10000)
    public void aFrameSentTheWrongWayClosesWithBadFrameOnRequestZero() throws Exception {
        relay.helloOk();
        relay.frame(Frame.RESPONSE, 5, ValueCodec.encode(new TypedBundle()));
        assertClosedWithBadFrame();
    }

    @Test(timeout = 10000)
    public void aChunkFromTheDesktopClosesWithBadFrame() throws Exception {
        relay.helloOk();
        relay.frame(Frame.CHUNK, 5, new byte[] {1});
        assertClosedWithBadFrame();
    }

    @Test(timeout = 10000)
    public void aRequestWithIdZeroClosesWithBadFrame() throws Exception {
        relay.helloOk();
        relay.request(0, "ping", null);
        assertClosedWithBadFrame();
    }

    @Test(timeout = 10000)
    public void reusingAnIdInFlightClosesWithBadFrame() throws Exception {
        relay.helloOk();
        relay.request(7, "call", slowCall());
        relay.request(7, "ping", null);
        assertClosedWithBadFrame();
    }

    @Test(timeout = 10000)
    public void anIdMayBeReusedOnceItsRequestFinished() throws Exception {
        relay.helloOk();
        relay.request(7, "ping", null);
        relay.reply(7, Frame.RESPONSE);
        relay.request(7, "ping", null);
        relay.reply(7, Frame.RESPONSE);
    }

    // ---------------------------------------------------------------- request-level

    @Test(timeout = 10000)
    public void anUndecodablePayloadFailsOnlyItsRequest() throws Exception {
        relay.helloOk();
        relay.frame(Frame.REQUEST, 4, new byte[] {0x07, 0, 0, 0, 1}); // Bundle cut short
        assertEquals("BAD_FRAME", relay.error(4));
        relay.frame(Frame.REQUEST, 5, ValueCodec.encode("not a Bundle"));
        assertEquals("BAD_FRAME", relay.error(5));
        relay.request(6, "ping", null);
        relay.reply(6, Frame.RESPONSE);
    }

    @Test(timeout = 10000)
    public void aMalformedRequestIsBadArgsAndTheConnectionStaysOpen() throws Exception {
        relay.helloOk();
        relay.frame(Frame.REQUEST, 2, ValueCodec.encode(new TypedBundle().put("op", 5)));
        assertEquals("BAD_ARGS", relay.error(2));
        relay.frame(Frame.REQUEST, 3, ValueCodec.encode(
                new TypedBundle().put("op", "ping").put("args", "x")));
        assertEquals("BAD_ARGS", relay.error(3));
        relay.frame(Frame.REQUEST, 4, ValueCodec.encode(new TypedBundle().put("args",
                new TypedBundle())));
        assertEquals("BAD_ARGS", relay.error(4));
        relay.request(5, "ping", null);
        relay.reply(5, Frame.RESPONSE);
    }

    @Test(timeout = 10000)
    public void argsMayBeOmitted() throws Exception {
        relay.helloOk();
        relay.request(2, "ping", null); // {op: "ping"} with no args key at all
        assertTrue(relay.reply(2, Frame.RESPONSE).get("time_ms") instanceof Long);
        relay.request(3, "discover", null);
        assertEquals(2, ((TypedBundle[]) relay.reply(3, Frame.RESPONSE).get("packages")).length);
    }

    @Test(timeout = 20000)
    public void moreThanSixtyFourInFlightIsBusy() throws Exception {
        assertEquals(64, Limits.MAX_IN_FLIGHT);
        relay.helloOk();
        for (int i = 0; i < 64; i++) {
            relay.request(100 + i, "call", slowCall());
        }
        relay.request(200, "ping", null);
        assertEquals("BUSY", relay.error(200));
        relay.frame(Frame.CANCEL, 100, null);
        assertEquals("CANCELLED", relay.error(100));
        // the slot comes back once the cancelled call's threads really ended (here: the
        // interrupted sleep returns at once); until then new requests are BUSY, never queued
        long id = 201;
        while (true) {
            relay.request(id, "ping", null);
            Frame f = relay.next();
            assertEquals(id, f.requestId);
            if (f.type == Frame.RESPONSE) {
                break;
            }
            assertEquals("BUSY", ValueCodec.decodeBundle(f.payload).get("code"));
            assertTrue("the cancelled request never gave its slot back", id < 5000);
            Thread.sleep(1);
            id++;
        }
    }

    // ---------------------------------------------------------------- hello

    @Test(timeout = 10000)
    public void theVersionIsCheckedBeforeTheToken() throws Exception {
        relay.request(9, "hello", PipeRelay.hello("wrong-token-wrong-token", 2));
        TypedBundle e = relay.reply(9, Frame.ERROR);
        assertEquals("UNSUPPORTED_VERSION", e.get("code"));
        assertNull(relay.next());
    }

    @Test(timeout = 10000)
    public void aWrongTokenCarriesTheHellosRequestId() throws Exception {
        relay.request(42, "hello", PipeRelay.hello("wrong-token-wrong-token", 1));
        assertEquals("AUTH_FAILED", relay.error(42));
        assertNull(relay.next());
    }

    @Test(timeout = 10000)
    public void anUndecodableHelloIsBadFrameForItsRequestId() throws Exception {
        relay.frame(Frame.REQUEST, 3, new byte[] {0x07, 0, 0});
        assertEquals("BAD_FRAME", relay.error(3));
        assertNull(relay.next());
    }

    @Test(timeout = 10000)
    public void aHelloWithRequestIdZeroIsBadFrameOnRequestZero() throws Exception {
        relay.request(0, "hello", PipeRelay.hello(PipeRelay.TOKEN, 1));
        assertClosedWithBadFrame();
    }

    @Test(timeout = 10000)
    public void noHelloInTimeIsAuthFailedOnRequestZero() throws Exception {
        long start = System.nanoTime();
        TypedBundle e = relay.reply(0, Frame.ERROR); // the harness set a 300 ms hello timer
        assertEquals("AUTH_FAILED", e.get("code"));
        assertTrue((String) e.get("message"), ((String) e.get("message")).contains("hello"));
        assertTrue("answered after " + (System.nanoTime() - start) / 1000000 + " ms",
                System.nanoTime() - start < 5000L * 1000000);
        assertNull(relay.next());
    }

    @Test(timeout = 10000)
    public void aHelloInTimeDisarmsTheTimer() throws Exception {
        relay.helloOk();
        Thread.sleep(600); // twice the harness's hello timeout
        relay.request(2, "ping", null);
        relay.reply(2, Frame.RESPONSE);
    }

    @Test(timeout = 10000)
    public void aSecondHelloIsBadArgs() throws Exception {
        relay.helloOk();
        relay.request(2, "hello", PipeRelay.hello(PipeRelay.TOKEN, 1));
        assertEquals("BAD_ARGS", relay.error(2));
        relay.request(3, "ping", null);
        relay.reply(3, Frame.RESPONSE);
    }

    @Test(timeout = 10000)
    public void pingIsAlwaysServedAndOpsOutsideTheCapabilitiesAreUnknown() throws Exception {
        relay.request(1, "hello", PipeRelay.hello(PipeRelay.TOKEN, 1));
        List<String> caps = Arrays.asList((String[]) relay.reply(1, Frame.RESPONSE)
                .get("capabilities"));
        assertTrue(caps.contains("ping"));
        assertEquals("capabilities are exactly the ops served",
                Arrays.asList(Dispatcher.OPS), caps);
        // ops of §4 that only the virtual device serves, and one that exists nowhere
        for (String op : new String[] {"fault", "force_stop", "answer_confirmation", "load_dex"}) {
            assertTrue(op, !caps.contains(op));
            relay.request(2, op, new TypedBundle());
            assertEquals(op, "UNKNOWN_OP", relay.error(2));
        }
        relay.request(3, "ping", null);
        relay.reply(3, Frame.RESPONSE);
    }

    // ---------------------------------------------------------------- args

    @Test(timeout = 10000)
    public void aBadTimeoutIsBadArgsForEveryOp() throws Exception {
        relay.helloOk();
        Object[] bad = {0, -1, 120001, 5L, "1000", null};
        long id = 10;
        for (String op : new String[] {"ping", "discover", "call"}) {
            for (Object t : bad) {
                if (t == null) {
                    continue;
                }
                TypedBundle args = new TypedBundle().put("timeout_ms", t);
                if ("call".equals(op)) {
                    args.put("authority", FakePlatform.AUTHORITY).put("method", "list_tools");
                }
                relay.request(++id, op, args);
                assertEquals(op + " timeout_ms=" + Values.describe(t), "BAD_ARGS", relay.error(id));
            }
        }
        relay.request(++id, "ping", new TypedBundle().put("timeout_ms", 120000));
        relay.reply(id, Frame.RESPONSE);
    }

    private Handles.FileRef largeFile() throws Exception {
        relay.request(2, "call", new TypedBundle().put("authority", FakePlatform.AUTHORITY)
                .put("method", "large_result"));
        return (Handles.FileRef) ((TypedBundle) relay.reply(2, Frame.RESPONSE).get("reply"))
                .get("result_fd");
    }

    @Test(timeout = 10000)
    public void readFileStreamsFullChunksByDefaultAndEndsWithSizeAndSha256() throws Exception {
        relay.helloOk();
        Handles.FileRef fd = largeFile();
        int size = FakePlatform.LARGE_FILE.length;
        relay.request(3, "read_file", new TypedBundle().put("handle", fd.id)
                .put("max_bytes", (long) size)); // exactly the size: allowed
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        Frame f = relay.next();
        assertEquals(Frame.CHUNK, f.type);
        assertEquals("default chunk_size", 262144, f.payload.length);
        got.write(f.payload);
        while ((f = relay.next()).type == Frame.CHUNK) {
            got.write(f.payload);
        }
        assertEquals(Frame.END, f.type);
        assertEquals(size, got.size());
        TypedBundle end = ValueCodec.decodeBundle(f.payload);
        assertEquals(2, end.size());
        assertEquals("size is a long", Long.valueOf(size), end.get("size"));
        String sha = (String) end.get("sha256");
        assertTrue(sha, sha.matches("[0-9a-f]{64}"));
        assertEquals(Digests.sha256Hex(FakePlatform.LARGE_FILE), sha);
    }

    @Test(timeout = 10000)
    public void readFileChunkSizeIsBoundedAndMaxBytesIsEnforced() throws Exception {
        relay.helloOk();
        Handles.FileRef fd = largeFile();
        relay.request(3, "read_file", new TypedBundle().put("handle", fd.id)
                .put("max_bytes", 1L << 20).put("chunk_size", 0));
        assertEquals("BAD_ARGS", relay.error(3));
        relay.request(4, "read_file", new TypedBundle().put("handle", fd.id)
                .put("max_bytes", 1L << 20).put("chunk_size", 262145));
        assertEquals("BAD_ARGS", relay.error(4));
        relay.request(5, "read_file", new TypedBundle().put("handle", fd.id)
                .put("max_bytes", (long) FakePlatform.LARGE_FILE.length - 1));
        Frame f;
        while ((f = relay.next()).type == Frame.CHUNK) {
            assertEquals(5, f.requestId);
        }
        assertEquals(5, f.requestId);
        assertEquals(Frame.ERROR, f.type);
        assertEquals("TOO_LARGE", ValueCodec.decodeBundle(f.payload).get("code"));
    }
}
