package org.cetp.inspector.relay.core;

import java.util.concurrent.ThreadFactory;

/** Named daemon threads for the relay's pools (a stuck provider call never blocks exit). */
public final class DaemonThreads {
    private DaemonThreads() {
    }

    /** Threads called {@code prefix1}, {@code prefix2}, …, all daemons. */
    public static ThreadFactory named(final String prefix) {
        return new ThreadFactory() {
            private int n;

            @Override
            public synchronized Thread newThread(Runnable r) {
                Thread t = new Thread(r, prefix + (++n));
                t.setDaemon(true);
                return t;
            }
        };
    }
}
