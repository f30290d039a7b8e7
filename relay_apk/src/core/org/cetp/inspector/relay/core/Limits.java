package org.cetp.inspector.relay.core;

/** Every bound the relay enforces, in one place. */
public final class Limits {
    public static final int PROTOCOL_VERSION = 1;
    public static final int DEFAULT_TIMEOUT_MS = 30000;
    public static final int MAX_TIMEOUT_MS = 120000;
    /** Requests running at once on one connection; more get BUSY. */
    public static final int MAX_IN_FLIGHT = 16;
    /** Handles one connection may hold. */
    public static final int MAX_HANDLES = 1024;
    public static final int DEFAULT_CHUNK = 65536;
    /** read_file never reads more than this, whatever max_bytes says. */
    public static final long MAX_READ_BYTES = 1L << 31;
    /** read_resource bound. */
    public static final int MAX_RESOURCE_BYTES = 4 * 1048576;
    /** A client must send its hello within this time. */
    public static final int HELLO_TIMEOUT_MS = 10000;

    private Limits() {
    }
}
