package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.util.ArrayList;
import java.util.List;

import org.cetp.inspector.relay.host.FakePlatform;

/**
 * A {@link Connection} over in-memory pipes with the host test platform behind it, seen from
 * the desktop's side: send frames, read the relay's frames. Test-only.
 */
final class PipeRelay {
    static final String TOKEN = "0123456789abcdef0123";
    private final InputStream fromRelay;
    private final OutputStream toRelay;
    private final Thread thread;
    private final List<String> logs = new ArrayList<String>();

    PipeRelay(int helloTimeoutMs) throws IOException {
        PipedInputStream relayIn = new PipedInputStream(1 << 20);
        toRelay = new PipedOutputStream(relayIn);
        PipedInputStream clientIn = new PipedInputStream(1 << 20);
        PipedOutputStream relayOut = new PipedOutputStream(clientIn);
        fromRelay = clientIn;
        FakePlatform platform = new FakePlatform();
        EventHub hub = new EventHub();
        platform.setEventListener(hub);
        Connection c = new Connection(relayIn, relayOut, new Dispatcher(platform),
                Utf8.encode(TOKEN), hub, new Connection.Log() {
                    @Override
                    public void info(String message) {
                        synchronized (logs) {
                            logs.add(message);
                        }
                    }
                });
        c.setHelloTimeoutMs(helloTimeoutMs);
        thread = new Thread(c, "connection-under-test");
        thread.start();
    }

    /** Ends the desktop side and checks the relay never logged the token. */
    void stop() throws Exception {
        toRelay.close();
        thread.join(5000);
        synchronized (logs) {
            for (String l : logs) {
                assertTrue("the token must never be logged: " + l, !l.contains(TOKEN));
            }
        }
    }

    void raw(byte[] bytes) throws IOException {
        toRelay.write(bytes);
        toRelay.flush();
    }

    void frame(int type, long id, byte[] payload) throws IOException {
        raw(FrameCodec.encode(new Frame(type, id, payload)));
    }

    void request(long id, String op, TypedBundle args) throws IOException {
        TypedBundle req = new TypedBundle().put("op", op);
        if (args != null) {
            req.put("args", args);
        }
        frame(Frame.REQUEST, id, ValueCodec.encode(req));
    }

    /** The relay's next frame, or null once it closed the connection. */
    Frame next() throws IOException {
        return FrameCodec.read(fromRelay);
    }

    TypedBundle reply(long id, int type) throws Exception {
        Frame f = next();
        assertTrue("the relay closed the connection instead of answering " + id, f != null);
        assertEquals("request id", id, f.requestId);
        if (f.type != type) {
            throw new AssertionError("expected " + Frame.typeName(type) + ", got "
                    + Frame.typeName(f.type) + " " + ValueCodec.decode(f.payload));
        }
        return ValueCodec.decodeBundle(f.payload);
    }

    /** The error code of the relay's ERROR for {@code id}. */
    String error(long id) throws Exception {
        return (String) reply(id, Frame.ERROR).get("code");
    }

    static TypedBundle hello(String token, int version) {
        return new TypedBundle().put("protocol_version", version).put("token", token)
                .put("client", "junit").put("events", false);
    }

    void helloOk() throws Exception {
        request(1, "hello", hello(TOKEN, 1));
        reply(1, Frame.RESPONSE);
    }
}
