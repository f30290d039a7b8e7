package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;

import org.junit.Test;

/**
 * The value and frame rules of docs/relay-protocol.md §1–§2 tightened for the final
 * protocol: strict UTF-8, UTF-8 key order, depth counted in Bundles, booleans and Bundle[]
 * elements, and header-only rejection of CHUNK, CANCEL and EVENT frames.
 */
public class WireRulesTest {
    private static byte[] string(int... utf8) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(ValueCodec.TAG_STRING);
        out.write(0);
        out.write(0);
        out.write(0);
        out.write(utf8.length);
        for (int b : utf8) {
            out.write(b);
        }
        return out.toByteArray();
    }

    /** A Bundle {key: null} whose key has the given UTF-8 bytes. */
    private static byte[] keyed(int... utf8) {
        byte[] s = string(utf8);
        byte[] out = new byte[5 + s.length - 1 + 1];
        out[0] = ValueCodec.TAG_BUNDLE;
        out[4] = 1;
        System.arraycopy(s, 1, out, 5, s.length - 1);
        out[out.length - 1] = ValueCodec.TAG_NULL;
        return out;
    }

    private static void rejected(byte[] wire, String what) {
        rejected(wire, what, "");
    }

    private static void rejected(byte[] wire, String what, String reason) {
        try {
            Object v = ValueCodec.decode(wire);
            fail(what + ": accepted " + Values.describe(v));
        } catch (ValueCodec.CodecException expected) {
            assertTrue(what + ": " + expected.getMessage(), expected.getMessage().contains(reason));
        }
    }

    @Test
    public void utf8IsStrictInStringsAndKeys() {
        int[][] bad = {
            {0xC0, 0x80},                   // Java "modified UTF-8" NUL (overlong)
            {0xC1, 0xBF},                   // overlong 2-byte
            {0xE0, 0x80, 0x80},             // overlong 3-byte
            {0xE0, 0x9F, 0xBF},             // overlong U+07FF
            {0xF0, 0x8F, 0xBF, 0xBF},       // overlong U+FFFF
            {0xED, 0xA0, 0x80},             // encoded high surrogate U+D800
            {0xED, 0xBF, 0xBF},             // encoded low surrogate U+DFFF
            {0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}, // CESU-8 (Java-style) U+1F600
            {0xF4, 0x90, 0x80, 0x80},       // above U+10FFFF
            {0xF5, 0x80, 0x80, 0x80},
            {0xFF},
            {0x80},                         // stray continuation byte
            {0xC3},                         // truncated 2-byte
            {0xE2, 0x82},                   // truncated 3-byte
            {0xF0, 0x9F, 0x98},             // truncated 4-byte
            {0xE2, 0x28, 0xA1},             // bad continuation
            {0x61, 0xC3, 0x28},
        };
        for (int[] b : bad) {
            rejected(string(b), "string " + Arrays.toString(b));
            rejected(keyed(b), "key " + Arrays.toString(b));
        }
    }

    @Test
    public void validUtf8AtTheEdgesIsAccepted() throws Exception {
        assertEquals("\u0000", ValueCodec.decode(string(0x00)));
        assertEquals("\u07FF", ValueCodec.decode(string(0xDF, 0xBF)));
        assertEquals("\uD7FF", ValueCodec.decode(string(0xED, 0x9F, 0xBF)));
        assertEquals("\uE000", ValueCodec.decode(string(0xEE, 0x80, 0x80)));
        assertEquals("\uFFFF", ValueCodec.decode(string(0xEF, 0xBF, 0xBF)));
        assertEquals("\uD800\uDC00", ValueCodec.decode(string(0xF0, 0x90, 0x80, 0x80)));
        assertEquals("\uD83D\uDE00", ValueCodec.decode(string(0xF0, 0x9F, 0x98, 0x80)));
        assertEquals("\uDBFF\uDFFF", ValueCodec.decode(string(0xF4, 0x8F, 0xBF, 0xBF)));
    }

    @Test
    public void aLoneSurrogateCannotBeEncoded() {
        for (Object v : new Object[] {"\uD800", new TypedBundle().put("x\uDC00", 1)}) {
            try {
                ValueCodec.encode(v);
                fail("encoded a lone surrogate");
            } catch (IllegalArgumentException expected) {
                assertTrue(expected.getMessage().contains("surrogate"));
            }
        }
    }

    @Test
    public void keysSortByUnsignedUtf8BytesWhichIsNotStringCompareTo() throws Exception {
        String bmpHigh = "\uFF5E";            // EF BD 9E
        String emoji = "\uD83D\uDE00";        // F0 9F 98 80
        String privateUse = "\uE000";         // EE 80 80
        String supplementaryLow = "\uD800\uDC00"; // F0 90 80 80
        assertTrue("String.compareTo orders by UTF-16 units", emoji.compareTo(bmpHigh) < 0);
        assertTrue(supplementaryLow.compareTo(privateUse) < 0);
        TypedBundle b = new TypedBundle().put(emoji, 1).put(bmpHigh, 2).put(privateUse, 3)
                .put(supplementaryLow, 4).put("z", 5).put("\u00E9", 6);
        List<String> expected = Arrays.asList("z", "\u00E9", privateUse, bmpHigh,
                supplementaryLow, emoji);
        assertEquals(expected, b.sortedKeys());
        byte[] wire = ValueCodec.encode(b);
        // the keys appear on the wire in that order
        int at = 0;
        for (String k : expected) {
            int found = indexOf(wire, Utf8.encode(k), at);
            assertTrue(k + " out of order", found >= at);
            at = found + 1;
        }
        assertEquals(b, ValueCodec.decode(wire));
    }

    private static int indexOf(byte[] hay, byte[] needle, int from) {
        outer:
        for (int i = from; i <= hay.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static TypedBundle nested(int depth) {
        TypedBundle b = new TypedBundle();
        for (int i = 1; i < depth; i++) {
            b = new TypedBundle().put("x", b);
        }
        return b;
    }

    @Test
    public void depthCountsBundlesOnlyOnTheDecodingSide() throws Exception {
        // 31 Bundles, then a Bundle[] holding the 32nd: legal (a Bundle[] adds no level)
        TypedBundle inner = nested(31);
        TypedBundle[] holder = {new TypedBundle()};
        TypedBundle top = new TypedBundle().put("arr", holder);
        for (int i = 2; i < 32; i++) {
            top = new TypedBundle().put("x", top);
        }
        byte[] ok = ValueCodec.encode(top);
        assertEquals(top, ValueCodec.decode(ok));
        assertEquals(inner, ValueCodec.decode(ValueCodec.encode(inner)));
        // one more Bundle inside the array element: 33 → rejected by the decoder
        byte[] deeper = ValueCodec.encode(top);
        int at = indexOf(deeper, new byte[] {ValueCodec.TAG_BUNDLE_ARRAY, 0, 0, 0, 1,
            ValueCodec.TAG_BUNDLE, 0, 0, 0, 0}, 0);
        assertTrue(at > 0);
        byte[] extra = {0, 0, 0, 1, 0, 0, 0, 1, 'y', ValueCodec.TAG_BUNDLE, 0, 0, 0, 0};
        byte[] wire = new byte[deeper.length + extra.length - 4];
        System.arraycopy(deeper, 0, wire, 0, at + 6);
        System.arraycopy(extra, 0, wire, at + 6, extra.length);
        System.arraycopy(deeper, at + 10, wire, at + 6 + extra.length, deeper.length - at - 10);
        rejected(wire, "33 Bundles through a Bundle[]", "deeper than 32");
        rejected(encodeUnchecked(33), "33 nested Bundles", "deeper than 32");
        assertEquals(nested(32), ValueCodec.decode(encodeUnchecked(32)));
    }

    /** {@code depth} nested Bundles {x: …} written by hand (the encoder refuses 33). */
    private static byte[] encodeUnchecked(int depth) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 1; i < depth; i++) {
            out.write(ValueCodec.TAG_BUNDLE);
            out.write(new byte[] {0, 0, 0, 1, 0, 0, 0, 1, 'x'}, 0, 9);
        }
        out.write(new byte[] {ValueCodec.TAG_BUNDLE, 0, 0, 0, 0}, 0, 5);
        return out.toByteArray();
    }

    @Test
    public void booleansAndBundleArrayElementsAreChecked() throws Exception {
        assertEquals(Boolean.TRUE, ValueCodec.decode(new byte[] {ValueCodec.TAG_BOOLEAN, 1}));
        assertEquals(Boolean.FALSE, ValueCodec.decode(new byte[] {ValueCodec.TAG_BOOLEAN, 0}));
        for (int b : new int[] {2, 0x80, 0xFF}) {
            rejected(new byte[] {ValueCodec.TAG_BOOLEAN, (byte) b}, "boolean " + b);
        }
        // Bundle[] of one int element, then of one String
        rejected(new byte[] {ValueCodec.TAG_BUNDLE_ARRAY, 0, 0, 0, 1, ValueCodec.TAG_INT, 0, 0, 0, 1},
                "Bundle[] with an int");
        rejected(new byte[] {ValueCodec.TAG_BUNDLE_ARRAY, 0, 0, 0, 1, ValueCodec.TAG_STRING, 0, 0, 0,
            0}, "Bundle[] with a String");
        Object ok = ValueCodec.decode(new byte[] {ValueCodec.TAG_BUNDLE_ARRAY, 0, 0, 0, 2,
            ValueCodec.TAG_NULL, ValueCodec.TAG_BUNDLE, 0, 0, 0, 0});
        assertTrue(Values.equal(new TypedBundle[] {null, new TypedBundle()}, ok));
    }

    /** Hands out the header; reading any payload byte fails the test. */
    private static final class HeaderOnly extends InputStream {
        private final byte[] header;
        private int i;

        HeaderOnly(byte[] header) {
            this.header = header;
        }

        @Override
        public int read() throws IOException {
            if (i >= header.length) {
                throw new AssertionError("the reader waited for the payload of a bad frame");
            }
            return header[i++] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (i >= header.length) {
                throw new AssertionError("the reader waited for the payload of a bad frame");
            }
            int n = Math.min(len, header.length - i);
            System.arraycopy(header, i, b, off, n);
            i += n;
            return n;
        }
    }

    private static void badHeader(int type, long id, int length, String reason) throws Exception {
        try {
            Frame f = FrameCodec.read(new HeaderOnly(FrameCodec.encodeHeader(type, id, length)));
            fail(reason + ": accepted " + f);
        } catch (FrameCodec.BadFrameException e) {
            assertEquals(RelayException.BAD_FRAME, e.code);
            assertTrue(e.getMessage(), e.getMessage().contains(reason));
        }
    }

    @Test
    public void chunkCancelAndEventAreRefusedFromTheHeaderAlone() throws Exception {
        badHeader(Frame.CHUNK, 3, 0, "CHUNK");
        badHeader(Frame.CHUNK, 3, FrameCodec.MAX_CHUNK + 1, "CHUNK");
        badHeader(Frame.CHUNK, 3, FrameCodec.MAX_FRAME_PAYLOAD, "CHUNK");
        badHeader(Frame.CANCEL, 3, 1, "CANCEL");
        badHeader(Frame.EVENT, 3, 5, "EVENT");
        badHeader(Frame.EVENT, 0xFFFFFFFFL, 0, "EVENT");
        badHeader(Frame.REQUEST, 1, FrameCodec.MAX_FRAME_PAYLOAD + 1, "maximum");
        badHeader(0, 1, 0, "type");
        badHeader(8, 1, 0, "type");
    }

    @Test
    public void chunksOfOneAndOfTheMaximumAreAccepted() throws Exception {
        for (int n : new int[] {1, FrameCodec.MAX_CHUNK}) {
            byte[] payload = new byte[n];
            payload[n - 1] = 7;
            Frame f = FrameCodec.read(new java.io.ByteArrayInputStream(
                    FrameCodec.encode(new Frame(Frame.CHUNK, 9, payload))));
            assertArrayEquals(payload, f.payload);
        }
        Frame cancel = FrameCodec.read(new java.io.ByteArrayInputStream(
                FrameCodec.encode(new Frame(Frame.CANCEL, 9, null))));
        assertEquals(Frame.CANCEL, cancel.type);
    }
}
