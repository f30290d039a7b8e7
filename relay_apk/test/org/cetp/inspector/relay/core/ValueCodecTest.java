package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import org.junit.Test;

public class ValueCodecTest {
    private static Object roundTrip(Object v) throws Exception {
        return ValueCodec.decode(ValueCodec.encode(v));
    }

    private static void assertRejected(byte[] wire, String reason) {
        try {
            ValueCodec.decode(wire);
            fail("accepted bytes that should fail with: " + reason);
        } catch (ValueCodec.CodecException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(reason));
        }
    }

    @Test
    public void everyTypeRoundTripsWithItsJavaType() throws Exception {
        TypedBundle inner = new TypedBundle().put("k", "v");
        TypedBundle b = new TypedBundle()
                .put("s", "héllo").put("i", 7).put("l", 7L).put("z", false).put("d", -0.0)
                .put("ia", new int[] {1, -1}).put("sa", new String[] {"a", null})
                .put("b", inner).put("ba", new TypedBundle[] {inner, null})
                .put("bytes", new byte[] {1, 2}).put("n", null)
                .put("pi", new Handles.PendingIntentRef("pi-1", "com.x", 11))
                .put("fd", new Handles.FileRef("fd-1", -1))
                .put("u", new Handles.Unsupported("android.graphics.Bitmap"));
        TypedBundle back = (TypedBundle) roundTrip(b);
        assertEquals(b, back);
        assertTrue(back.get("i") instanceof Integer);
        assertTrue(back.get("l") instanceof Long);
        assertEquals(Double.doubleToRawLongBits(-0.0),
                Double.doubleToRawLongBits((Double) back.get("d")));
        assertTrue(back.containsKey("n"));
    }

    @Test
    public void keysAreWrittenInUtf8ByteOrderNotUtf16Order() {
        // U+FF5E sorts after U+1F600 in UTF-16 code units but before it in UTF-8 bytes
        TypedBundle b = new TypedBundle().put("\uD83D\uDE00", 1).put("\uFF5E", 2).put("a", 3);
        assertEquals("a", b.sortedKeys().get(0));
        assertEquals("\uFF5E", b.sortedKeys().get(1));
        byte[] once = ValueCodec.encode(b);
        TypedBundle reordered = new TypedBundle().put("a", 3).put("\uFF5E", 2).put("\uD83D\uDE00", 1);
        assertArrayEquals(once, ValueCodec.encode(reordered));
    }

    @Test
    public void strictDecoding() {
        assertRejected(new byte[] {0x04, 2}, "boolean");
        assertRejected(new byte[] {0x0E}, "unknown value tag");
        assertRejected(new byte[] {0x02, 0, 0, 0, 1, 0}, "trailing");
        assertRejected(new byte[] {0x01, 0, 0, 0, 2, (byte) 0xC3}, "past the end");
        assertRejected(new byte[] {0x01, 0, 0, 0, 2, (byte) 0xC0, (byte) 0x80}, "UTF-8");
        // a count of 2^32-1 ints in a 5-byte payload: refused before allocating
        assertRejected(new byte[] {0x05, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff}, "count");
        // duplicate key "a"
        assertRejected(new byte[] {0x07, 0, 0, 0, 2, 0, 0, 0, 1, 'a', 0x00, 0, 0, 0, 1, 'a', 0x00},
                "duplicate");
        assertRejected(new byte[0], "past the end");
    }

    @Test
    public void nestingIsBoundedAt32Bundles() throws Exception {
        TypedBundle b = new TypedBundle();
        for (int i = 1; i < ValueCodec.MAX_DEPTH; i++) {
            b = new TypedBundle().put("x", b);
        }
        // 32 levels: fine; Bundle[] adds no level
        roundTrip(b);
        roundTrip(new TypedBundle[] {b});
        TypedBundle deeper = new TypedBundle().put("x", b);
        try {
            ValueCodec.encode(deeper);
            fail("encoded 33 levels");
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage().contains("deeper"));
        }
    }

    @Test
    public void valuesOfOtherJavaTypesAreRefused() {
        try {
            new TypedBundle().put("f", 1.5f);
            fail("accepted a float");
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage().contains("java.lang.Float"));
        }
    }
}
