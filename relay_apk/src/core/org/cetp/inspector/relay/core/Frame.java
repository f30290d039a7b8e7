package org.cetp.inspector.relay.core;

/** One protocol frame (docs/relay-protocol.md §1): type, request id and raw payload. */
public final class Frame {
    public static final int REQUEST = 1;
    public static final int RESPONSE = 2;
    public static final int ERROR = 3;
    public static final int CHUNK = 4;
    public static final int END = 5;
    public static final int EVENT = 6;
    public static final int CANCEL = 7;

    public final int type;
    /** Unsigned 32-bit request id held in a long. */
    public final long requestId;
    public final byte[] payload;

    public Frame(int type, long requestId, byte[] payload) {
        this.type = type;
        this.requestId = requestId & 0xFFFFFFFFL;
        this.payload = payload == null ? new byte[0] : payload;
    }

    public static Frame value(int type, long requestId, TypedBundle value) {
        return new Frame(type, requestId, ValueCodec.encode(value));
    }

    public static String typeName(int type) {
        switch (type) {
            case REQUEST: return "REQUEST";
            case RESPONSE: return "RESPONSE";
            case ERROR: return "ERROR";
            case CHUNK: return "CHUNK";
            case END: return "END";
            case EVENT: return "EVENT";
            case CANCEL: return "CANCEL";
            default: return "type " + type;
        }
    }

    @Override
    public String toString() {
        return typeName(type) + "#" + requestId + "(" + payload.length + " bytes)";
    }
}
