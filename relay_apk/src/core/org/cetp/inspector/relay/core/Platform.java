package org.cetp.inspector.relay.core;

import java.io.IOException;
import java.io.InputStream;

/**
 * Everything the relay needs from Android, as a small interface so the protocol core runs
 * and is tested on the host JVM. Methods may block; the dispatcher bounds each call with
 * the request's timeout and maps exceptions with {@link Errors#map}. Native objects
 * (PendingIntent, ParcelFileDescriptor) live in the connection's {@link HandleTable}.
 */
public interface Platform {

    /** Who the relay is (shown in the hello) and which device it runs on. */
    Identity identity();

    /** Package records per docs/relay-protocol.md §4.1; only {@code pkg} when non-null. */
    TypedBundle[] discover(String pkg) throws Exception;

    /** ContentResolver.call; native reply values become handles in {@code handles}. */
    TypedBundle call(String authority, String method, String arg, TypedBundle extras,
                     int timeoutMs, HandleTable handles) throws Exception;

    /** Opens a readable stream on a handle's native object (a ParcelFileDescriptor). */
    FileSource openFile(Object nativeHandle) throws Exception;

    ActivityResult launchPendingIntent(Object nativeHandle, int timeoutMs) throws Exception;

    TransactResult bindTransact(String pkg, String action, String descriptor, int code,
                                String[] strings, int timeoutMs) throws Exception;

    /**
     * Sends {@code action} to {@code pkg} (with FLAG_INCLUDE_STOPPED_PACKAGES when
     * {@code includeStopped}) and waits for one broadcast on {@code replyAction}.
     */
    BroadcastResult broadcast(String pkg, String action, TypedBundle extras, String replyAction,
                              boolean includeStopped, int timeoutMs) throws Exception;

    ActivityStart startActivity(String pkg, String action, TypedBundle extras) throws Exception;

    ResourceData readResource(String pkg, int resourceId, int maxBytes) throws Exception;

    WakeResult wakeProvider(String authority, String pkg, String mode, int timeoutMs)
            throws Exception;

    /** Frees a native object when its handle is closed or the connection ends. */
    void release(Object nativeHandle);

    /** Where the platform pushes package change events; null stops them. */
    void setEventListener(EventListener listener);

    interface EventListener {
        void onEvent(TypedBundle event);
    }

    final class Identity {
        public final String callerPackage;
        public final int callerUid;
        public final String[] callerCertSha256;
        public final int versionCode;
        public final String versionName;
        public final TypedBundle device;
        /** Permissions the relay's manifest requests; null when the platform cannot tell. */
        public final String[] requestedPermissions;
        /** Those of them the relay holds now (checkSelfPermission); null when unknown. */
        public final String[] heldPermissions;

        public Identity(String callerPackage, int callerUid, String[] callerCertSha256,
                        int versionCode, String versionName, TypedBundle device) {
            this(callerPackage, callerUid, callerCertSha256, versionCode, versionName, device,
                    null, null);
        }

        public Identity(String callerPackage, int callerUid, String[] callerCertSha256,
                        int versionCode, String versionName, TypedBundle device,
                        String[] requestedPermissions, String[] heldPermissions) {
            this.requestedPermissions = requestedPermissions;
            this.heldPermissions = heldPermissions;
            this.callerPackage = callerPackage;
            this.callerUid = callerUid;
            this.callerCertSha256 = callerCertSha256;
            this.versionCode = versionCode;
            this.versionName = versionName;
            this.device = device;
        }
    }

    final class FileSource {
        public final InputStream stream;
        /** Size from fstat, -1 when unknown. */
        public final long size;

        public FileSource(InputStream stream, long size) {
            this.stream = stream;
            this.size = size;
        }

        public void close() {
            try {
                stream.close();
            } catch (IOException ignored) {
                // nothing more to do with a stream we are abandoning
            }
        }
    }

    final class ActivityResult {
        public final int resultCode;
        public final TypedBundle data;
        /** {@link PendingIntents} outcome; null when the platform cannot tell. */
        public final String outcome;
        /** Time from launch to result; -1 when not measured. */
        public final long elapsedMs;

        public ActivityResult(int resultCode, TypedBundle data) {
            this(resultCode, data, null, -1);
        }

        public ActivityResult(int resultCode, TypedBundle data, String outcome, long elapsedMs) {
            this.resultCode = resultCode;
            this.data = data;
            this.outcome = outcome;
            this.elapsedMs = elapsedMs;
        }
    }

    final class TransactResult {
        /** {class, message} when the remote side wrote an exception, else null. */
        public final TypedBundle exception;
        public final String reply;

        public TransactResult(TypedBundle exception, String reply) {
            this.exception = exception;
            this.reply = reply;
        }
    }

    final class BroadcastResult {
        public final TypedBundle reply;
        public final boolean timedOut;
        /** ApplicationInfo.FLAG_STOPPED of the target when sent; null when unknown. */
        public final Boolean targetStopped;

        public BroadcastResult(TypedBundle reply, boolean timedOut) {
            this(reply, timedOut, null);
        }

        public BroadcastResult(TypedBundle reply, boolean timedOut, Boolean targetStopped) {
            this.reply = reply;
            this.timedOut = timedOut;
            this.targetStopped = targetStopped;
        }
    }

    final class ActivityStart {
        public final boolean launched;
        public final String component;

        public ActivityStart(boolean launched, String component) {
            this.launched = launched;
            this.component = component;
        }
    }

    final class ResourceData {
        public final byte[] data;
        public final String name;

        public ResourceData(byte[] data, String name) {
            this.data = data;
            this.name = name;
        }
    }

    final class WakeResult {
        public final boolean ok;
        public final String detail;

        public WakeResult(boolean ok, String detail) {
            this.ok = ok;
            this.detail = detail;
        }
    }
}
