package org.cetp.inspector.relay.host;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

import org.cetp.inspector.relay.core.Connection;
import org.cetp.inspector.relay.core.Dispatcher;
import org.cetp.inspector.relay.core.EventHub;
import org.cetp.inspector.relay.core.FrameCodec;
import org.cetp.inspector.relay.core.Limits;
import org.cetp.inspector.relay.core.Utf8;

/**
 * The relay's protocol core on the host JVM, serving a fake device ({@link FakePlatform})
 * on a loopback TCP port so the desktop's client tests talk to the same Java code the APK
 * runs. Not part of the APK.
 *
 * <p>Usage: {@code java -cp … HostMain [--port N] [--hello-timeout-ms N]}; the session token is read from the
 * environment variable RELAY_TOKEN (never from the command line, which other users can
 * see). Prints {@code LISTENING <port>} once ready.
 */
public final class HostMain {
    /** Pending connections the kernel queues; 16 made 500 connections take 28 s (SYN retries). */
    static final int ACCEPT_BACKLOG = 512;

    private HostMain() {
    }

    public static void main(String[] argv) throws IOException {
        int port = 0;
        int helloTimeout = Limits.HELLO_TIMEOUT_MS;
        FakePlatform.Config config = new FakePlatform.Config();
        java.util.Set<String> granted = new java.util.HashSet<String>(config.relayGranted);
        String[] held = null;
        for (int i = 0; i < argv.length; i++) {
            if ("--port".equals(argv[i]) && i + 1 < argv.length) {
                port = Integer.parseInt(argv[++i]);
            } else if ("--hello-timeout-ms".equals(argv[i]) && i + 1 < argv.length) {
                helloTimeout = Integer.parseInt(argv[++i]);
            } else if ("--android-api".equals(argv[i]) && i + 1 < argv.length) {
                config.api = Integer.parseInt(argv[++i]);
            } else if ("--without-permission".equals(argv[i]) && i + 1 < argv.length) {
                granted.remove(argv[++i]);  // play a relay whose manifest lacks it
            } else if ("--held-permissions".equals(argv[i]) && i + 1 < argv.length) {
                String list = argv[++i]; // comma-separated; empty: the relay holds none
                held = list.isEmpty() ? new String[0] : list.split(",");
            } else {
                System.err.println("usage: HostMain [--port N] [--hello-timeout-ms N] "
                        + "[--android-api N] [--without-permission P]... [--held-permissions P1,P2]"
                        + "   (token in $RELAY_TOKEN)");
                System.exit(2);
            }
        }
        final int helloTimeoutMs = helloTimeout;
        String token = System.getenv("RELAY_TOKEN");
        if (token == null || token.isEmpty()) {
            System.err.println("HostMain: set RELAY_TOKEN to the session token");
            System.exit(2);
        }
        final byte[] tokenBytes = Utf8.encode(token);
        config.relayGranted = granted;
        final FakePlatform platform = new FakePlatform(config);
        if (held != null) {
            platform.setHeldPermissions(held);
        }
        final Dispatcher dispatcher = new Dispatcher(platform);
        final EventHub hub = new EventHub();
        platform.setEventListener(hub);
        final Connection.Log log = new Connection.Log() {
            @Override
            public void info(String message) {
                System.err.println("relay: " + message);
            }
        };
        ServerSocket server = new ServerSocket(port, ACCEPT_BACKLOG,
                InetAddress.getByName("127.0.0.1"));
        System.out.println("LISTENING " + server.getLocalPort());
        System.out.flush();
        while (true) {
            final Socket s = server.accept();
            s.setTcpNoDelay(true);
            Thread t = new Thread(new Runnable() {
                @Override
                public void run() {
                    try {
                        // the connection's timer answers a silent peer; this only frees the thread
                        s.setSoTimeout(helloTimeoutMs + Limits.HELLO_READ_BACKSTOP_MS);
                        s.setSendBufferSize(Limits.SEND_BUFFER_BYTES);
                        Connection c = new Connection(new BufferedInputStream(s.getInputStream()),
                                new BufferedOutputStream(s.getOutputStream(),
                                        FrameCodec.HEADER_SIZE + FrameCodec.MAX_CHUNK),
                                dispatcher, tokenBytes, hub, log);
                        c.setHelloTimeoutMs(helloTimeoutMs);
                        c.setOnAuthenticated(new Runnable() {
                            @Override
                            public void run() {
                                try {
                                    s.setSoTimeout(0);
                                } catch (IOException e) {
                                    log.info("cannot clear the hello timeout: " + e.getMessage());
                                }
                            }
                        });
                        c.run();
                    } catch (IOException e) {
                        log.info("connection failed: " + e.getMessage());
                    } finally {
                        try {
                            s.close();
                        } catch (IOException ignored) {
                            // already closed
                        }
                    }
                }
            }, "relay-connection");
            t.setDaemon(true);
            t.start();
        }
    }
}
