package org.cetp.inspector.relay.app;

import android.app.PendingIntent;
import android.os.Bundle;
import android.os.Parcelable;
import android.os.ParcelFileDescriptor;
import android.system.Os;
import android.system.OsConstants;
import android.system.StructStat;

import java.lang.reflect.Method;

import org.cetp.inspector.relay.core.Errors;
import org.cetp.inspector.relay.core.HandleTable;
import org.cetp.inspector.relay.core.Handles;
import org.cetp.inspector.relay.core.RelayException;
import org.cetp.inspector.relay.core.TypedBundle;

/**
 * android.os.Bundle ⇄ wire Bundle (docs/relay-protocol.md §2). PendingIntents and
 * ParcelFileDescriptors in replies become handles; anything without a wire type becomes an
 * `unsupported` value carrying its class name, never silently dropped.
 */
final class BundleMapper {
    private BundleMapper() {
    }

    static Bundle toAndroid(TypedBundle b, HandleTable handles) throws RelayException {
        if (b == null) {
            return null;
        }
        Bundle out = new Bundle();
        for (String k : b.sortedKeys()) {
            Object v = b.get(k);
            if (v == null) {
                out.putString(k, null);
            } else if (v instanceof String) {
                out.putString(k, (String) v);
            } else if (v instanceof Integer) {
                out.putInt(k, (Integer) v);
            } else if (v instanceof Long) {
                out.putLong(k, (Long) v);
            } else if (v instanceof Boolean) {
                out.putBoolean(k, (Boolean) v);
            } else if (v instanceof Double) {
                out.putDouble(k, (Double) v);
            } else if (v instanceof int[]) {
                out.putIntArray(k, (int[]) v);
            } else if (v instanceof String[]) {
                out.putStringArray(k, (String[]) v);
            } else if (v instanceof byte[]) {
                out.putByteArray(k, (byte[]) v);
            } else if (v instanceof TypedBundle) {
                out.putBundle(k, toAndroid((TypedBundle) v, handles));
            } else if (v instanceof TypedBundle[]) {
                TypedBundle[] a = (TypedBundle[]) v;
                Bundle[] arr = new Bundle[a.length];
                for (int i = 0; i < a.length; i++) {
                    arr[i] = toAndroid(a[i], handles);
                }
                out.putParcelableArray(k, arr);
            } else if (v instanceof Handles.PendingIntentRef && handles != null) {
                out.putParcelable(k, (Parcelable) handles.get(((Handles.PendingIntentRef) v).id));
            } else if (v instanceof Handles.FileRef && handles != null) {
                out.putParcelable(k, (Parcelable) handles.get(((Handles.FileRef) v).id));
            } else {
                throw new RelayException(RelayException.BAD_ARGS, "extras key '" + k
                        + "' has a value the relay cannot send: " + v);
            }
        }
        return out;
    }

    /** Maps a reply Bundle; {@code handles} may be null (handles then become unsupported). */
    static TypedBundle fromAndroid(Bundle b, HandleTable handles) throws RelayException {
        if (b == null) {
            return null;
        }
        TypedBundle out = new TypedBundle();
        java.util.Set<String> keys;
        try {
            keys = b.keySet(); // API <= 32 unparcels every value here, not per key
        } catch (RuntimeException e) {
            throw new RelayException(RelayException.IPC_FAILED, "the reply Bundle cannot be"
                    + " unparcelled (" + Errors.describe(e) + "): it"
                    + " holds a class only the provider knows; Android 12 and older read the whole"
                    + " Bundle at once, 13+ would report that key alone as unsupported");
        }
        for (String k : keys) {
            Object v;
            try {
                v = b.get(k);
            } catch (RuntimeException e) {
                // BadParcelableException: a class only the provider knows
                out.put(k, new Handles.Unsupported("unparcelable: " + e.getMessage()));
                continue;
            }
            out.put(k, value(v, handles));
        }
        return out;
    }

    static Object value(Object v, HandleTable handles) throws RelayException {
        if (v == null || v instanceof String || v instanceof Integer || v instanceof Long
                || v instanceof Boolean || v instanceof Double || v instanceof int[]
                || v instanceof byte[]) {
            return v;
        }
        if (v instanceof String[]) {
            return ((String[]) v).clone();
        }
        if (v instanceof Bundle) {
            return fromAndroid((Bundle) v, handles);
        }
        if (v instanceof Parcelable[]) {
            Parcelable[] a = (Parcelable[]) v;
            TypedBundle[] out = new TypedBundle[a.length];
            for (int i = 0; i < a.length; i++) {
                if (a[i] != null && !(a[i] instanceof Bundle)) {
                    return new Handles.Unsupported(v.getClass().getName() + " of "
                            + a[i].getClass().getName());
                }
                out[i] = fromAndroid((Bundle) a[i], handles);
            }
            return out;
        }
        if (v instanceof PendingIntent && handles != null) {
            PendingIntent pi = (PendingIntent) v;
            String id = handles.register("pi", pi);
            return new Handles.PendingIntentRef(id, pi.getCreatorPackage(), pendingIntentFlags(pi));
        }
        if (v instanceof ParcelFileDescriptor && handles != null) {
            ParcelFileDescriptor pfd = (ParcelFileDescriptor) v;
            String id = handles.register("fd", pfd);
            return new Handles.FileRef(id, fileSize(pfd));
        }
        return new Handles.Unsupported(v.getClass().getName());
    }

    /** Immutability and activity target are only knowable on API 31+ (by reflection). */
    static int pendingIntentFlags(PendingIntent pi) {
        int flags = 0;
        Boolean immutable = callBoolean(pi, "isImmutable");
        if (immutable != null) {
            flags |= Handles.PendingIntentRef.IMMUTABLE_KNOWN;
            if (immutable) {
                flags |= Handles.PendingIntentRef.IMMUTABLE;
            }
        }
        Boolean activity = callBoolean(pi, "isActivity");
        if (activity != null) {
            flags |= Handles.PendingIntentRef.KIND_KNOWN;
            if (activity) {
                flags |= Handles.PendingIntentRef.ACTIVITY;
            }
        }
        return flags;
    }

    /** PendingIntent.isActivity() (API 31); null before 31, where it cannot be known. */
    static Boolean isActivity(PendingIntent pi) {
        return callBoolean(pi, "isActivity");
    }

    private static Boolean callBoolean(Object o, String method) {
        try {
            Method m = o.getClass().getMethod(method);
            return (Boolean) m.invoke(o);
        } catch (Exception e) {
            return null;
        }
    }

    /** fstat size for regular files, -1 for pipes and sockets (no size known up front). */
    static long fileSize(ParcelFileDescriptor pfd) {
        try {
            StructStat st = Os.fstat(pfd.getFileDescriptor());
            return OsConstants.S_ISREG(st.st_mode) ? st.st_size : -1;
        } catch (Exception e) {
            return -1;
        }
    }
}
