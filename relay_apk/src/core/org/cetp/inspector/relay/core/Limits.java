package org.cetp.inspector.relay.core;

/** Every bound the relay enforces, in one place. */
public final class Limits {
    public static final int PROTOCOL_VERSION = 1;
    public static final int DEFAULT_TIMEOUT_MS = 30000;
    public static final int MAX_TIMEOUT_MS = 120000;
    /** Requests running at once on one connection; more get BUSY. */
    public static final int MAX_IN_FLIGHT = 64;
    /** Handles one connection may hold. */
    public static final int MAX_HANDLES = 1024;
    /** read_file chunk_size default and maximum (docs/relay-protocol.md §4). */
    public static final int DEFAULT_CHUNK = 262144;
    /** read_file never reads more than this, whatever max_bytes says. */
    public static final long MAX_READ_BYTES = 1L << 31;
    /** read_resource bound. */
    public static final int MAX_RESOURCE_BYTES = 4 * 1048576;
    /**
     * Largest frame payload accepted before the hello succeeded: a hello is a few hundred
     * bytes, so an unauthenticated peer cannot make the relay hold 1 MiB per connection.
     */
    public static final int MAX_HELLO_PAYLOAD = 8192;
    /**
     * Platform calls running at once across all connections (the dispatcher's IPC threads).
     * A call that timed out or was cancelled keeps its thread until the provider returns
     * (binder calls cannot be interrupted), so this bounds the relay's threads; beyond it new
     * requests get BUSY.
     */
    public static final int MAX_IPC_CALLS = 96;
    /** A client must send its hello within this time. */
    public static final int HELLO_TIMEOUT_MS = 10000;
    /**
     * Transports set their read timeout this much later than the hello timeout: the
     * connection's own timer answers a silent peer with ERROR AUTH_FAILED first, the read
     * timeout only frees a thread whose blocked read the close did not wake.
     */
    public static final int HELLO_READ_BACKSTOP_MS = 2000;
    /**
     * Socket send buffer for connections: several full CHUNK frames, so a stream flows
     * without a wake-up per packet (the kernel caps it at net.core.wmem_max).
     */
    public static final int SEND_BUFFER_BYTES = 1048576;

    private Limits() {
    }
}
