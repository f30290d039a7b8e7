package org.cetp.inspector.relay.core;

/** A failure with a relay error code (docs/relay-protocol.md §6), sent as an ERROR frame. */
public class RelayException extends Exception {
    private static final long serialVersionUID = 1L;

    public static final String BAD_FRAME = "BAD_FRAME";
    public static final String UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION";
    public static final String AUTH_FAILED = "AUTH_FAILED";
    public static final String UNKNOWN_OP = "UNKNOWN_OP";
    public static final String BAD_ARGS = "BAD_ARGS";
    public static final String NOT_FOUND = "NOT_FOUND";
    public static final String SECURITY = "SECURITY";
    public static final String TIMEOUT = "TIMEOUT";
    public static final String IPC_FAILED = "IPC_FAILED";
    public static final String TOO_LARGE = "TOO_LARGE";
    public static final String CANCELLED = "CANCELLED";
    public static final String BUSY = "BUSY";
    public static final String INTERNAL = "INTERNAL";
    /**
     * An activity start needs the relay's own activity resumed (Android 10+ drops background
     * activity starts silently); the desktop brings it forward with {@code am start} and retries.
     */
    public static final String NEEDS_FOREGROUND = "NEEDS_FOREGROUND";

    public final String code;
    public final TypedBundle details;

    public RelayException(String code, String message) {
        this(code, message, null);
    }

    public RelayException(String code, String message, TypedBundle details) {
        super(message);
        this.code = code;
        this.details = details;
    }

    /** The ERROR frame payload: {code, message, details?} (details omitted when absent). */
    public TypedBundle toBundle() {
        TypedBundle b = new TypedBundle().put("code", code)
                .put("message", getMessage() == null ? code : getMessage());
        if (details != null) {
            b.put("details", details);
        }
        return b;
    }
}
