package org.cetp.inspector.relay.app;

import android.app.Notification;
import android.app.Service;
import android.content.Intent;
import android.net.Credentials;
import android.net.LocalServerSocket;
import android.net.LocalSocket;
import android.net.LocalSocketAddress;
import android.os.IBinder;
import android.util.Log;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.cetp.inspector.relay.R;
import org.cetp.inspector.relay.core.Connection;
import org.cetp.inspector.relay.core.Dispatcher;
import org.cetp.inspector.relay.core.EventHub;
import org.cetp.inspector.relay.core.FrameCodec;
import org.cetp.inspector.relay.core.Limits;
import org.cetp.inspector.relay.core.Utf8;

/**
 * Listens on an abstract local socket with a per-session name and serves the relay
 * protocol to shell/root peers that present the per-session token. Runs in the foreground
 * while a session is open; a new start replaces the previous session.
 */
public final class RelayService extends Service {
    static final String TAG = "CetpRelay";
    static final String EXTRA_SOCKET = "org.cetp.inspector.relay.SOCKET";
    static final String EXTRA_TOKEN = "org.cetp.inspector.relay.TOKEN";
    static final String ACTION_STOP = "org.cetp.inspector.relay.STOP";
    private static final int NOTIFICATION_ID = 1;
    static final int SHELL_UID = 2000;
    static final int ROOT_UID = 0;

    private AndroidPlatform platform;
    private Dispatcher dispatcher;
    private final EventHub hub = new EventHub();
    private Session session;

    private static final Connection.Log LOG = new Connection.Log() {
        @Override
        public void info(String message) {
            Log.i(TAG, message);
        }
    };

    @Override
    public void onCreate() {
        super.onCreate();
        platform = new AndroidPlatform(this);
        dispatcher = new Dispatcher(platform);
        platform.setEventListener(hub);
    }

    @Override
    public int onStartCommand(Intent intent, int flags, int startId) {
        Notification n = Compat.notificationBuilder(this, "relay", getString(R.string.channel_name))
                .setContentTitle(getString(R.string.notification_title))
                .setContentText(getString(R.string.notification_text))
                .setSmallIcon(android.R.drawable.stat_sys_data_bluetooth)
                .setOngoing(true)
                .build();
        try {
            Compat.startForeground(this, NOTIFICATION_ID, n);
        } catch (RuntimeException e) {
            // e.g. ForegroundServiceStartNotAllowedException (12+) or a SecurityException for a
            // missing FOREGROUND_SERVICE_* permission. We were started with
            // startForegroundService, so running on without startForeground ends in an ANR
            // (8-11) or ForegroundServiceDidNotStartInTimeException (12+) about 10 s later
            // (ActiveServices.serviceForegroundTimeout): stop now and say why instead.
            Log.e(TAG, "could not enter the foreground, stopping the relay service: " + e
                    + " (start it from adb shell or the relay screen; see docs/relay-apk.md)");
            stopSession();
            stopSelf();
            return START_NOT_STICKY;
        }
        if (intent == null || ACTION_STOP.equals(intent.getAction())) {
            stopSession();
            stopSelf();
            return START_NOT_STICKY;
        }
        String socket = intent.getStringExtra(EXTRA_SOCKET);
        String token = intent.getStringExtra(EXTRA_TOKEN);
        if (socket == null || socket.isEmpty() || token == null || token.length() < 16) {
            Log.w(TAG, "start without a socket name or a token of at least 16 characters; ignored");
            if (session == null) {
                stopSelf();
            }
            return START_NOT_STICKY;
        }
        stopSession();
        try {
            session = new Session(socket, Utf8.encode(token));
            session.start();
            Log.i(TAG, "listening on a new session socket");
        } catch (IOException e) {
            Log.e(TAG, "cannot listen on the session socket: " + e.getMessage());
            session = null;
            stopSelf();
        }
        // not sticky: a restarted service would have no token, the desktop restarts us
        return START_NOT_STICKY;
    }

    private void stopSession() {
        if (session != null) {
            session.close();
            session = null;
        }
    }

    @Override
    public void onDestroy() {
        stopSession();
        platform.shutdown();
        dispatcher.shutdown();
        super.onDestroy();
    }

    @Override
    public IBinder onBind(Intent intent) {
        return null;
    }

    /** One listening socket and its connections. */
    private final class Session extends Thread {
        private final LocalServerSocket server;
        private final String name;
        private final byte[] token;
        private final List<LocalSocket> sockets = new ArrayList<LocalSocket>();
        private volatile boolean closed;

        Session(String name, byte[] token) throws IOException {
            super("relay-accept");
            this.server = new LocalServerSocket(name);
            this.name = name;
            this.token = token;
            setDaemon(true);
        }

        @Override
        public void run() {
            while (!closed) {
                final LocalSocket s;
                try {
                    s = server.accept();
                } catch (IOException e) {
                    if (!closed) {
                        Log.w(TAG, "accept failed: " + e.getMessage());
                    }
                    return;
                }
                if (!peerAllowed(s)) {
                    closeQuietly(s);
                    continue;
                }
                synchronized (sockets) {
                    sockets.add(s);
                }
                Thread t = new Thread(new Runnable() {
                    @Override
                    public void run() {
                        serve(s);
                    }
                }, "relay-connection");
                t.setDaemon(true);
                t.start();
            }
        }

        private boolean peerAllowed(LocalSocket s) {
            try {
                Credentials c = s.getPeerCredentials();
                int uid = c.getUid();
                if (uid == SHELL_UID || uid == ROOT_UID) {
                    return true;
                }
                Log.w(TAG, "refused a connection from uid " + uid + " (only shell or root)");
            } catch (IOException e) {
                Log.w(TAG, "refused a connection without peer credentials");
            }
            return false;
        }

        private void serve(final LocalSocket s) {
            try {
                // the connection's timer answers a silent peer; this only frees the thread
                s.setSoTimeout(Limits.HELLO_TIMEOUT_MS + Limits.HELLO_READ_BACKSTOP_MS);
                growSendBuffer(s);
                // one buffer holds a header and a whole CHUNK: one write per streamed chunk
                Connection c = new Connection(new BufferedInputStream(s.getInputStream()),
                        new BufferedOutputStream(s.getOutputStream(),
                                FrameCodec.HEADER_SIZE + FrameCodec.MAX_CHUNK),
                        dispatcher, token, hub, LOG);
                c.setOnAuthenticated(new Runnable() {
                    @Override
                    public void run() {
                        try {
                            s.setSoTimeout(0);
                        } catch (IOException e) {
                            Log.w(TAG, "cannot clear the hello timeout: " + e.getMessage());
                        }
                    }
                });
                c.run();
            } catch (IOException e) {
                Log.w(TAG, "connection failed: " + e.getMessage());
            } finally {
                closeQuietly(s);
                synchronized (sockets) {
                    sockets.remove(s);
                }
            }
        }

        void close() {
            closed = true;
            try {
                server.close();
            } catch (IOException ignored) {
                // closing anyway
            }
            // close() does not wake a blocked accept() on every Android version: poke it
            LocalSocket poke = new LocalSocket();
            try {
                poke.connect(new LocalSocketAddress(name));
            } catch (IOException ignored) {
                // nobody listening any more: fine
            } finally {
                closeQuietly(poke);
            }
            synchronized (sockets) {
                for (LocalSocket s : sockets) {
                    closeQuietly(s);
                }
                sockets.clear();
            }
        }
    }

    /**
     * A send buffer of several CHUNK frames lets read_file streams flow without a wake-up
     * per packet (the kernel default, net.core.wmem_default, is usually 208 KiB: less than
     * one full CHUNK frame).
     */
    private static void growSendBuffer(LocalSocket s) {
        try {
            s.setSendBufferSize(Limits.SEND_BUFFER_BYTES);
        } catch (IOException e) {
            Log.w(TAG, "cannot enlarge the socket send buffer: " + e.getMessage());
        }
    }

    private static void closeQuietly(LocalSocket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
