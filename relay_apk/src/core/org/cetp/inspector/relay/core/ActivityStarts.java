package org.cetp.inspector.relay.core;

/**
 * What an activity start from the relay may report, kept out of the Android glue so the
 * rules are tested on the host JVM. The relay never reports "launched" without knowing:
 * from Android 10 (API 29) a start from the background is dropped silently unless the
 * starter is visible or holds an exemption (AOSP ActivityStarter / BackgroundActivityStartController;
 * developer.android.com/guide/components/activities/background-starts), so the relay
 * only starts activities from its own resumed activity and otherwise answers
 * {@link RelayException#NEEDS_FOREGROUND}; a start that throws is reported, not left to
 * crash the main thread.
 */
public final class ActivityStarts {
    /** The relay's screen, as {@code am start -n} takes it (class is in the .app package). */
    public static final String RELAY_ACTIVITY = "org.cetp.inspector.relay/.app.RelayActivity";
    /** The shell command that brings the relay forward (shell is exempt from BAL limits). */
    public static final String BRING_FORWARD = "adb shell am start -n " + RELAY_ACTIVITY;
    /** First API level that drops background activity starts (Android 10). */
    public static final int BAL_RESTRICTED_FROM_API = 29;

    private ActivityStarts() {
    }

    /** Whether a start from the background would be dropped on {@code sdkInt}. */
    public static boolean needsRelayInFront(int sdkInt, boolean relayResumed) {
        return !relayResumed && sdkInt >= BAL_RESTRICTED_FROM_API;
    }

    /** The typed error for a start the relay cannot make from where it is. */
    public static RelayException needsForeground(String what, String component) {
        return new RelayException(RelayException.NEEDS_FOREGROUND, what + " needs the relay"
                + " screen in front: Android 10+ drops activity starts from the background"
                + " without telling the app. Unlock the phone and run: " + BRING_FORWARD
                + " (the inspector does this and retries once)",
                new TypedBundle().put("component", component)
                        .put("relay_activity", RELAY_ACTIVITY));
    }

    /** Maps what {@code startActivity} threw to a relay error (never a crash). */
    public static RelayException startFailed(Throwable t, String component) {
        String name = t.getClass().getName();
        if ("android.content.ActivityNotFoundException".equals(name)) {
            return new RelayException(RelayException.NOT_FOUND, "no activity to start for "
                    + component + ": " + Errors.describe(t));
        }
        if (t instanceof SecurityException) {
            return new RelayException(RelayException.SECURITY, "Android refused to start "
                    + component + " (not exported, protected by a permission, or blocked by"
                    + " the ROM): " + Errors.describe(t));
        }
        return Errors.map(t);
    }
}
