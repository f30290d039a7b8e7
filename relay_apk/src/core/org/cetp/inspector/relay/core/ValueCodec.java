package org.cetp.inspector.relay.core;

import java.io.ByteArrayOutputStream;
import java.nio.charset.CharacterCodingException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * Tagged value encoding of docs/relay-protocol.md §2. Encoding is deterministic (Bundle keys
 * in ascending UTF-8 byte order); decoding is strict: duplicate keys, unknown tags,
 * trailing bytes, over-long lengths, invalid UTF-8, bad booleans and nesting deeper than
 * {@link #MAX_DEPTH} are rejected with a {@link CodecException}.
 */
public final class ValueCodec {
    public static final int TAG_NULL = 0x00;
    public static final int TAG_STRING = 0x01;
    public static final int TAG_INT = 0x02;
    public static final int TAG_LONG = 0x03;
    public static final int TAG_BOOLEAN = 0x04;
    public static final int TAG_INT_ARRAY = 0x05;
    public static final int TAG_STRING_ARRAY = 0x06;
    public static final int TAG_BUNDLE = 0x07;
    public static final int TAG_PENDING_INTENT = 0x08;
    public static final int TAG_FILE_DESCRIPTOR = 0x09;
    public static final int TAG_DOUBLE = 0x0A;
    public static final int TAG_BYTES = 0x0B;
    public static final int TAG_BUNDLE_ARRAY = 0x0C;
    public static final int TAG_UNSUPPORTED = 0x0D;

    /** Bundles may nest this deep: the outermost Bundle is depth 1, Bundle[] adds no level. */
    public static final int MAX_DEPTH = 32;

    private ValueCodec() {
    }

    /** Thrown for any malformed encoded value; the message says what and where. */
    public static final class CodecException extends Exception {
        private static final long serialVersionUID = 1L;

        public CodecException(String message) {
            super(message);
        }
    }

    // ----------------------------------------------------------------- encoding

    public static byte[] encode(Object value) {
        Out out = new Out();
        write(out, value, 1);
        return out.toByteArray();
    }

    private static final class Out extends ByteArrayOutputStream {
        void u8(int v) {
            write(v & 0xff);
        }

        void u32(long v) {
            i32((int) v);
        }

        void i32(int v) {
            write((v >>> 24) & 0xff);
            write((v >>> 16) & 0xff);
            write((v >>> 8) & 0xff);
            write(v & 0xff);
        }

        void i64(long v) {
            i32((int) (v >>> 32));
            i32((int) v);
        }

        void bytes(byte[] b) {
            write(b, 0, b.length);
        }

        void str(String s) {
            byte[] b = Utf8.encode(s);
            u32(b.length);
            bytes(b);
        }
    }

    private static void write(Out out, Object v, int depth) {
        if (v instanceof TypedBundle && depth > MAX_DEPTH) {
            throw new IllegalArgumentException("value nests deeper than " + MAX_DEPTH);
        }
        if (v == null) {
            out.u8(TAG_NULL);
        } else if (v instanceof String) {
            out.u8(TAG_STRING);
            out.str((String) v);
        } else if (v instanceof Integer) {
            out.u8(TAG_INT);
            out.i32((Integer) v);
        } else if (v instanceof Long) {
            out.u8(TAG_LONG);
            out.i64((Long) v);
        } else if (v instanceof Boolean) {
            out.u8(TAG_BOOLEAN);
            out.u8(((Boolean) v) ? 1 : 0);
        } else if (v instanceof int[]) {
            int[] a = (int[]) v;
            out.u8(TAG_INT_ARRAY);
            out.u32(a.length);
            for (int x : a) {
                out.i32(x);
            }
        } else if (v instanceof String[]) {
            String[] a = (String[]) v;
            out.u8(TAG_STRING_ARRAY);
            out.u32(a.length);
            for (String s : a) {
                if (s == null) {
                    out.u32(0xFFFFFFFFL);
                } else {
                    out.str(s);
                }
            }
        } else if (v instanceof TypedBundle) {
            out.u8(TAG_BUNDLE);
            writeBundleBody(out, (TypedBundle) v, depth);
        } else if (v instanceof Handles.PendingIntentRef) {
            Handles.PendingIntentRef p = (Handles.PendingIntentRef) v;
            out.u8(TAG_PENDING_INTENT);
            out.str(p.id);
            out.str(p.creatorPackage);
            out.u32(p.flags);
        } else if (v instanceof Handles.FileRef) {
            Handles.FileRef f = (Handles.FileRef) v;
            out.u8(TAG_FILE_DESCRIPTOR);
            out.str(f.id);
            out.i64(f.size);
        } else if (v instanceof Double) {
            out.u8(TAG_DOUBLE);
            out.i64(Double.doubleToRawLongBits((Double) v));
        } else if (v instanceof byte[]) {
            byte[] b = (byte[]) v;
            out.u8(TAG_BYTES);
            out.u32(b.length);
            out.bytes(b);
        } else if (v instanceof TypedBundle[]) {
            TypedBundle[] a = (TypedBundle[]) v;
            out.u8(TAG_BUNDLE_ARRAY);
            out.u32(a.length);
            for (TypedBundle b : a) {
                write(out, b, depth); // Bundle[] adds no nesting level
            }
        } else if (v instanceof Handles.Unsupported) {
            out.u8(TAG_UNSUPPORTED);
            out.str(((Handles.Unsupported) v).className);
        } else {
            throw new IllegalArgumentException(v.getClass().getName() + " is not a typed value");
        }
    }

    /** A key with its UTF-8 bytes, encoded once for both sorting and writing. */
    private static final class Key implements Comparable<Key> {
        final String key;
        final byte[] utf8;

        Key(String key) {
            this.key = key;
            this.utf8 = Utf8.encode(key);
        }

        @Override
        public int compareTo(Key o) {
            return TypedBundle.compareUnsigned(utf8, o.utf8);
        }
    }

    private static void writeBundleBody(Out out, TypedBundle b, int depth) {
        Set<String> names = b.keySet();
        Key[] keys = new Key[names.size()];
        int i = 0;
        for (String k : names) {
            keys[i++] = new Key(k);
        }
        Arrays.sort(keys); // ascending UTF-8 bytes, not String.compareTo (§2)
        out.u32(keys.length);
        for (Key k : keys) {
            out.u32(k.utf8.length);
            out.bytes(k.utf8);
            write(out, b.get(k.key), depth + 1);
        }
    }

    // ----------------------------------------------------------------- decoding

    /** Decodes exactly one value occupying all of {@code data}. */
    public static Object decode(byte[] data) throws CodecException {
        return decode(data, 0, data.length);
    }

    public static Object decode(byte[] data, int off, int len) throws CodecException {
        In in = new In(data, off, off + len);
        Object v = read(in, 1);
        if (in.pos != in.end) {
            throw new CodecException((in.end - in.pos) + " trailing bytes after the value");
        }
        return v;
    }

    /** Decodes a value that must be a Bundle (frame payloads). */
    public static TypedBundle decodeBundle(byte[] data) throws CodecException {
        Object v = decode(data);
        if (!(v instanceof TypedBundle)) {
            throw new CodecException("expected a Bundle, got " + Values.describe(v));
        }
        return (TypedBundle) v;
    }

    private static final class In {
        final byte[] b;
        int pos;
        final int end;

        In(byte[] b, int pos, int end) {
            this.b = b;
            this.pos = pos;
            this.end = end;
        }

        void need(long n, String what) throws CodecException {
            if (n < 0 || n > end - pos) {
                throw new CodecException(what + " runs past the end of the payload (offset "
                        + pos + ", needs " + n + ", has " + (end - pos) + ")");
            }
        }

        int u8(String what) throws CodecException {
            need(1, what);
            return b[pos++] & 0xff;
        }

        int i32(String what) throws CodecException {
            need(4, what);
            int v = ((b[pos] & 0xff) << 24) | ((b[pos + 1] & 0xff) << 16)
                    | ((b[pos + 2] & 0xff) << 8) | (b[pos + 3] & 0xff);
            pos += 4;
            return v;
        }

        long u32(String what) throws CodecException {
            return i32(what) & 0xFFFFFFFFL;
        }

        long i64(String what) throws CodecException {
            long hi = i32(what) & 0xFFFFFFFFL;
            long lo = i32(what) & 0xFFFFFFFFL;
            return (hi << 32) | lo;
        }

        /** A count of elements each at least {@code minSize} bytes: bounded by the payload. */
        int count(int minSize, String what) throws CodecException {
            long n = u32(what + " count");
            if (n * minSize > end - pos) {
                throw new CodecException(what + " count " + n + " runs past the end of the payload");
            }
            return (int) n;
        }

        byte[] raw(long n, String what) throws CodecException {
            need(n, what);
            byte[] out = new byte[(int) n];
            System.arraycopy(b, pos, out, 0, (int) n);
            pos += (int) n;
            return out;
        }

        String strBody(long n, String what) throws CodecException {
            need(n, what);
            try {
                String s = Utf8.decode(b, pos, (int) n);
                pos += (int) n;
                return s;
            } catch (CharacterCodingException e) {
                throw new CodecException(what + " is not valid UTF-8 (offset " + pos + ")");
            }
        }

        String str(String what) throws CodecException {
            return strBody(u32(what + " length"), what);
        }
    }

    private static Object read(In in, int depth) throws CodecException {
        int tagPos = in.pos;
        int tag = in.u8("value tag");
        switch (tag) {
            case TAG_NULL:
                return null;
            case TAG_STRING:
                return in.str("String");
            case TAG_INT:
                return Integer.valueOf(in.i32("int"));
            case TAG_LONG:
                return Long.valueOf(in.i64("long"));
            case TAG_BOOLEAN: {
                int v = in.u8("boolean");
                if (v > 1) {
                    throw new CodecException("boolean byte must be 0 or 1, got " + v);
                }
                return Boolean.valueOf(v == 1);
            }
            case TAG_INT_ARRAY: {
                int n = in.count(4, "int[]");
                int[] a = new int[n];
                for (int i = 0; i < n; i++) {
                    a[i] = in.i32("int[] element");
                }
                return a;
            }
            case TAG_STRING_ARRAY: {
                int n = in.count(4, "String[]");
                String[] a = new String[n];
                for (int i = 0; i < n; i++) {
                    long len = in.u32("String[] element length");
                    a[i] = len == 0xFFFFFFFFL ? null : in.strBody(len, "String[] element");
                }
                return a;
            }
            case TAG_BUNDLE:
                return readBundleBody(in, depth);
            case TAG_PENDING_INTENT: {
                String id = in.str("PendingIntent id");
                String pkg = in.str("PendingIntent creator package");
                int flags = (int) in.u32("PendingIntent flags");
                return new Handles.PendingIntentRef(id, pkg, flags);
            }
            case TAG_FILE_DESCRIPTOR: {
                String id = in.str("FileDescriptor id");
                return new Handles.FileRef(id, in.i64("FileDescriptor size"));
            }
            case TAG_DOUBLE:
                return Double.valueOf(Double.longBitsToDouble(in.i64("double")));
            case TAG_BYTES:
                return in.raw(in.u32("byte[] length"), "byte[]");
            case TAG_BUNDLE_ARRAY: {
                int n = in.count(1, "Bundle[]");
                TypedBundle[] a = new TypedBundle[n];
                for (int i = 0; i < n; i++) {
                    int t = in.u8("Bundle[] element tag");
                    if (t == TAG_NULL) {
                        a[i] = null;
                    } else if (t == TAG_BUNDLE) {
                        a[i] = readBundleBody(in, depth); // Bundle[] adds no level
                    } else {
                        throw new CodecException("Bundle[] element has tag 0x"
                                + Integer.toHexString(t) + ", expected Bundle or null");
                    }
                }
                return a;
            }
            case TAG_UNSUPPORTED:
                return new Handles.Unsupported(in.str("unsupported class name"));
            default:
                throw new CodecException("unknown value tag 0x" + Integer.toHexString(tag)
                        + " at offset " + tagPos);
        }
    }

    private static void checkDepth(int depth) throws CodecException {
        if (depth > MAX_DEPTH) {
            throw new CodecException("value nests deeper than " + MAX_DEPTH);
        }
    }

    private static TypedBundle readBundleBody(In in, int depth) throws CodecException {
        checkDepth(depth);
        int n = in.count(5, "Bundle");
        TypedBundle b = new TypedBundle();
        Set<String> seen = new HashSet<String>();
        for (int i = 0; i < n; i++) {
            String key = in.str("Bundle key");
            if (!seen.add(key)) {
                throw new CodecException("duplicate Bundle key \"" + key + "\"");
            }
            b.put(key, read(in, depth + 1));
        }
        return b;
    }
}
