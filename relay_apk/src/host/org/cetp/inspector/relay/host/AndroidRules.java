package org.cetp.inspector.relay.host;

import java.util.Set;

import org.cetp.inspector.relay.core.RelayException;
import org.cetp.inspector.relay.core.TypedBundle;

/**
 * The Android rules the host-JVM fake platform enforces, the same as the Python rules layer
 * (inspector/android/rules.py) and checked against the same vectors
 * (tests/vectors/android_rules/cases.json). Pure functions; each names its AOSP source.
 */
public final class AndroidRules {
    private AndroidRules() {
    }

    /**
     * Rules provider_exported and provider_permission: may a caller acquire a provider?
     * Models ContentProviderHelper.checkContentProviderPermission (frameworks/base
     * services/core/java/com/android/server/am/; ActivityManagerService before API 31):
     * the provider's own UID always may; a non-exported provider refuses other UIDs; else
     * the caller needs readPermission OR writePermission (a null one counts as granted).
     * android:permission fills both unless they are given. Throws SecurityException, which
     * the relay core answers as SECURITY.
     */
    public static void checkProviderAccess(String callerPackage, int callerUid, Set<String> granted,
                                           String providerName, int providerUid, boolean exported,
                                           String permission, String readPermission,
                                           String writePermission) {
        String who = callerPackage + " (uid=" + callerUid + ")";
        if (callerUid == providerUid) {
            return;
        }
        if (!exported) {
            throw new SecurityException("Permission Denial: opening provider " + providerName
                    + " from " + who + " that is not exported from UID " + providerUid);
        }
        String read = readPermission != null ? readPermission : permission;
        String write = writePermission != null ? writePermission : permission;
        if (read == null || granted.contains(read) || write == null || granted.contains(write)) {
            return;
        }
        throw new SecurityException("Permission Denial: opening provider " + providerName + " from "
                + who + " requires " + read + " or " + write + "; the caller does not hold " + read
                + " [Android rule provider_permission]");
    }

    /**
     * Rule stopped_package_broadcast: a stopped package (never launched since install, or
     * force-stopped) receives a broadcast only with FLAG_INCLUDE_STOPPED_PACKAGES (Intent,
     * 0x20; ActivityManagerService.broadcastIntentLocked adds FLAG_EXCLUDE_STOPPED_PACKAGES).
     */
    public static boolean broadcastDelivered(boolean targetStopped, boolean includeStopped) {
        return !targetStopped || includeStopped;
    }

    /**
     * Rule null_binding: a service returned null from onBind. ServiceConnection.onNullBinding
     * exists from API 28 (LoadedApk.ServiceDispatcher.doConnected), so the relay answers at
     * once; before 28 nothing calls back, so the bind waits out its timeout and the relay
     * (core Bindings.noConnection) answers IPC_FAILED naming a likely null binding rather than
     * a bare TIMEOUT.
     */
    public static RelayException nullBinding(int api, int timeoutMs) {
        if (api >= 28) {
            return new RelayException(RelayException.IPC_FAILED,
                    "the service returned no binder (onNullBinding) [Android rule null_binding]");
        }
        RelayException e = org.cetp.inspector.relay.core.Bindings.noConnection(api,
                "the service", timeoutMs);
        return new RelayException(e.code, e.getMessage() + " [Android rule null_binding]",
                new TypedBundle().put("null_binding", "likely"));
    }
}
