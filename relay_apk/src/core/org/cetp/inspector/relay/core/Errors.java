package org.cetp.inspector.relay.core;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * Maps any Throwable from a platform call to a relay error. Android exception classes are
 * recognised by name so this stays plain Java: SecurityException → SECURITY,
 * DeadObjectException/RemoteException → IPC_FAILED, timeouts → TIMEOUT.
 */
public final class Errors {
    private Errors() {
    }

    public static RelayException map(Throwable t) {
        if (t instanceof ExecutionException && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof RelayException) {
            return (RelayException) t;
        }
        String what = describe(t);
        if (t instanceof SecurityException) {
            return new RelayException(RelayException.SECURITY, what);
        }
        if (t instanceof TimeoutException) {
            return new RelayException(RelayException.TIMEOUT, what);
        }
        if (t instanceof InterruptedException || t instanceof CancellationException) {
            return new RelayException(RelayException.CANCELLED, "the request was cancelled");
        }
        for (Class<?> c = t.getClass(); c != null; c = c.getSuperclass()) {
            String n = c.getName();
            if (n.equals("android.os.RemoteException") || n.equals("android.os.DeadObjectException")
                    || n.equals("android.os.BadParcelableException")) {
                return new RelayException(RelayException.IPC_FAILED, what);
            }
        }
        if (t instanceof OutOfMemoryError) {
            return new RelayException(RelayException.TOO_LARGE, "out of memory: " + what);
        }
        return new RelayException(RelayException.INTERNAL, what);
    }

    /** Class name and message, bounded: exception text may come from a provider. */
    public static String describe(Throwable t) {
        String m = t.getMessage();
        String s = t.getClass().getName() + (m == null ? "" : ": " + m);
        return s.length() > 2000 ? s.substring(0, 2000) + "…" : s;
    }
}
