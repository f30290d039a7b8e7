package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.InputStream;

import org.junit.Test;

public class FrameCodecTest {
    @Test
    public void framesRoundTripAndReadsStopCleanlyBetweenFrames() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        FrameCodec.write(out, Frame.value(Frame.RESPONSE, 0xFFFFFFFFL, new TypedBundle().put("a", 1)));
        FrameCodec.write(out, new Frame(Frame.CHUNK, 3, new byte[] {9}));
        InputStream in = new ByteArrayInputStream(out.toByteArray());
        Frame f = FrameCodec.read(in);
        assertEquals(Frame.RESPONSE, f.type);
        assertEquals(0xFFFFFFFFL, f.requestId);
        assertEquals(new TypedBundle().put("a", 1), ValueCodec.decode(f.payload));
        Frame c = FrameCodec.read(in);
        assertArrayEquals(new byte[] {9}, c.payload);
        assertNull(FrameCodec.read(in));
    }

    /** A stream that hands out one byte per read, like a slow socket. */
    private static final class Trickle extends InputStream {
        private final byte[] b;
        private int i;

        Trickle(byte[] b) {
            this.b = b;
        }

        @Override
        public int read() {
            return i < b.length ? b[i++] & 0xff : -1;
        }

        @Override
        public int read(byte[] dst, int off, int len) {
            if (i >= b.length) {
                return -1;
            }
            dst[off] = b[i++];
            return 1;
        }
    }

    @Test
    public void readsFullyFromShortReads() throws Exception {
        byte[] wire = FrameCodec.encode(Frame.value(Frame.EVENT, 0, new TypedBundle().put("event", "x")));
        Frame f = FrameCodec.read(new Trickle(wire));
        assertEquals(Frame.EVENT, f.type);
    }

    @Test
    public void oversizedFrameIsRefusedWithoutReadingThePayload() throws Exception {
        byte[] header = FrameCodec.encodeHeader(Frame.REQUEST, 1, FrameCodec.MAX_FRAME_PAYLOAD + 1);
        try {
            FrameCodec.read(new ByteArrayInputStream(header));
            fail("accepted an oversized frame");
        } catch (FrameCodec.BadFrameException e) {
            assertTrue(e.getMessage().contains("maximum"));
        }
    }

    @Test
    public void truncatedPayloadIsAnError() throws Exception {
        byte[] wire = FrameCodec.encode(new Frame(Frame.CHUNK, 1, new byte[10]));
        byte[] cut = new byte[wire.length - 1];
        System.arraycopy(wire, 0, cut, 0, cut.length);
        try {
            FrameCodec.read(new ByteArrayInputStream(cut));
            fail("accepted a truncated frame");
        } catch (EOFException expected) {
            assertTrue(expected.getMessage().contains("truncated"));
        }
    }

    @Test
    public void encodingRefusesPayloadsOverTheMaximum() {
        try {
            FrameCodec.encode(new Frame(Frame.RESPONSE, 1, new byte[FrameCodec.MAX_FRAME_PAYLOAD + 1]));
            fail("encoded an oversized frame");
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage().contains("exceeds"));
        }
    }
}
