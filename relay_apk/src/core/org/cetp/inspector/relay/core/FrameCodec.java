package org.cetp.inspector.relay.core;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;

/**
 * Reads and writes frames: magic "CETR", version 1, type, flags 0, request id, length,
 * payload. Reads are read-fully loops and check the header before touching the payload,
 * so an oversized announcement never allocates; a sound announcement is not trusted either:
 * the payload buffer grows with the bytes that really arrive ({@link #ALLOCATION_STEP} at a
 * time), so headers announcing 1 MiB that are never followed by data cost nothing.
 */
public final class FrameCodec {
    public static final byte[] MAGIC = {0x43, 0x45, 0x54, 0x52};
    public static final int VERSION = 1;
    public static final int HEADER_SIZE = 16;
    public static final int MAX_FRAME_PAYLOAD = 1048576;
    public static final int MAX_CHUNK = 262144;
    /** The payload buffer starts at most this big and at most doubles per read. */
    public static final int ALLOCATION_STEP = 65536;

    private FrameCodec() {
    }

    /** A frame header the receiver must refuse (BAD_FRAME or TOO_LARGE, then close). */
    public static final class BadFrameException extends IOException {
        private static final long serialVersionUID = 1L;

        public final String code;

        public BadFrameException(String code, String message) {
            super(message);
            this.code = code;
        }
    }

    public static byte[] encodeHeader(int type, long requestId, int length) {
        byte[] h = new byte[HEADER_SIZE];
        System.arraycopy(MAGIC, 0, h, 0, 4);
        h[4] = (byte) VERSION;
        h[5] = (byte) type;
        h[6] = 0;
        h[7] = 0;
        putU32(h, 8, requestId);
        putU32(h, 12, length);
        return h;
    }

    public static byte[] encode(Frame f) {
        if (f.payload.length > MAX_FRAME_PAYLOAD) {
            throw new IllegalArgumentException("frame payload of " + f.payload.length
                    + " bytes exceeds the maximum " + MAX_FRAME_PAYLOAD);
        }
        byte[] h = encodeHeader(f.type, f.requestId, f.payload.length);
        byte[] out = new byte[h.length + f.payload.length];
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(f.payload, 0, out, h.length, f.payload.length);
        return out;
    }

    public static void write(OutputStream out, Frame f) throws IOException {
        out.write(encode(f));
        out.flush();
    }

    /** Returns the next frame, or null on a clean end of stream between frames. */
    public static Frame read(InputStream in) throws IOException {
        return read(in, MAX_FRAME_PAYLOAD);
    }

    /**
     * Like {@link #read(InputStream)} with a lower payload bound {@code maxPayload} (the
     * connection uses {@link Limits#MAX_HELLO_PAYLOAD} before the hello): a larger
     * announcement is BAD_FRAME from its header alone.
     */
    public static Frame read(InputStream in, int maxPayload) throws IOException {
        byte[] h = new byte[HEADER_SIZE];
        int got = readFully(in, h, 0, HEADER_SIZE);
        if (got == 0) {
            return null;
        }
        if (got < HEADER_SIZE) {
            throw new BadFrameException("BAD_FRAME", "truncated frame header (" + got + " bytes)");
        }
        return readAfterHeader(in, h, maxPayload);
    }

    static Frame readAfterHeader(InputStream in, byte[] h) throws IOException {
        return readAfterHeader(in, h, MAX_FRAME_PAYLOAD);
    }

    static Frame readAfterHeader(InputStream in, byte[] h, int maxPayload) throws IOException {
        for (int i = 0; i < 4; i++) {
            if (h[i] != MAGIC[i]) {
                throw new BadFrameException("BAD_FRAME", "bad frame magic");
            }
        }
        if ((h[4] & 0xff) != VERSION) {
            throw new BadFrameException("BAD_FRAME", "unknown frame version " + (h[4] & 0xff));
        }
        int type = h[5] & 0xff;
        if (h[6] != 0 || h[7] != 0) {
            throw new BadFrameException("BAD_FRAME", "non-zero frame flags");
        }
        long requestId = getU32(h, 8);
        long length = getU32(h, 12);
        if (length > MAX_FRAME_PAYLOAD) {
            throw new BadFrameException("BAD_FRAME", "frame announces " + length
                    + " payload bytes, maximum is " + MAX_FRAME_PAYLOAD);
        }
        if (length > maxPayload) {
            throw new BadFrameException("BAD_FRAME", "frame announces " + length
                    + " payload bytes, maximum before the hello is " + maxPayload);
        }
        if (type < Frame.REQUEST || type > Frame.CANCEL) {
            throw new BadFrameException("BAD_FRAME", "unknown frame type " + type);
        }
        if (type == Frame.CHUNK && (length < 1 || length > MAX_CHUNK)) {
            throw new BadFrameException("BAD_FRAME", "CHUNK payload must be 1 … " + MAX_CHUNK
                    + " bytes, got " + length);
        }
        if (type == Frame.CANCEL && length != 0) {
            throw new BadFrameException("BAD_FRAME", "CANCEL payload must be empty, got "
                    + length + " bytes");
        }
        if (type == Frame.EVENT && requestId != 0) {
            throw new BadFrameException("BAD_FRAME", "EVENT frames use request id 0, got "
                    + requestId);
        }
        return new Frame(type, requestId, readPayload(in, (int) length));
    }

    /**
     * Reads exactly {@code length} bytes, growing the buffer only as bytes arrive: a peer
     * that announces a large payload and sends nothing holds at most {@link #ALLOCATION_STEP}.
     */
    static byte[] readPayload(InputStream in, int length) throws IOException {
        byte[] buf = new byte[Math.min(length, ALLOCATION_STEP)];
        int total = 0;
        while (total < length) {
            if (total == buf.length) {
                buf = Arrays.copyOf(buf, (int) Math.min((long) length, 2L * buf.length));
            }
            int n = in.read(buf, total, buf.length - total);
            if (n < 0) {
                throw new EOFException("connection closed inside a frame (truncated frame)");
            }
            total += n;
        }
        return buf;
    }

    /** Reads until {@code len} bytes or end of stream; returns the count read. */
    public static int readFully(InputStream in, byte[] b, int off, int len) throws IOException {
        int total = 0;
        while (total < len) {
            int n = in.read(b, off + total, len - total);
            if (n < 0) {
                break;
            }
            total += n;
        }
        return total;
    }

    static void putU32(byte[] b, int off, long v) {
        b[off] = (byte) (v >>> 24);
        b[off + 1] = (byte) (v >>> 16);
        b[off + 2] = (byte) (v >>> 8);
        b[off + 3] = (byte) v;
    }

    static long getU32(byte[] b, int off) {
        return ((b[off] & 0xffL) << 24) | ((b[off + 1] & 0xffL) << 16)
                | ((b[off + 2] & 0xffL) << 8) | (b[off + 3] & 0xffL);
    }
}
