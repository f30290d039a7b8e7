package org.cetp.inspector.relay.core;

/**
 * What a bindService that never connected means, by API level (plain Java, host-tested).
 * ServiceConnection.onNullBinding, called when the service's onBind returns null, exists
 * only from API 28; before that LoadedApk.ServiceDispatcher.doConnected drops a null binder
 * without calling the app, so on Android 8.x a null binding and a service that is merely slow
 * look the same: silence. The relay says so instead of a bare TIMEOUT.
 */
public final class Bindings {
    /** First API level with ServiceConnection.onNullBinding. */
    public static final int NULL_BINDING_CALLBACK_API = 28;

    private Bindings() {
    }

    /** The service's onBind returned null (onNullBinding, API 28+). */
    public static RelayException nullBinding(String component) {
        return new RelayException(RelayException.IPC_FAILED, component + " returned null from"
                + " onBind (onNullBinding): it offers no binder to bind_transact",
                new TypedBundle().put("null_binding", true));
    }

    /** bindService succeeded but nothing connected within {@code timeoutMs}. */
    public static RelayException noConnection(int sdkInt, String component, int timeoutMs) {
        if (sdkInt < NULL_BINDING_CALLBACK_API) {
            return new RelayException(RelayException.IPC_FAILED, component + " was bound but"
                    + " never connected within " + timeoutMs + " ms. Before Android 9 a service"
                    + " whose onBind returns null looks exactly like this (there is no"
                    + " onNullBinding callback), so it most likely offers no binder; a service"
                    + " that is merely slow would need a longer timeout_ms",
                    new TypedBundle().put("null_binding", "likely"));
        }
        return new RelayException(RelayException.TIMEOUT, component + " did not connect within "
                + timeoutMs + " ms (a null binding would have been reported as such)");
    }
}
