package org.cetp.inspector.relay.core;

/**
 * What a PendingIntent launch really tells us, plain Java so it is tested on the host JVM.
 *
 * <ul>
 * <li>startActivityForResult into a new task (FLAG_ACTIVITY_NEW_TASK, launchMode singleTask /
 * singleInstance) is answered RESULT_CANCELED at once ("Activity is launching as a new task,
 * so cancelling activity result": ActivityStarter.sendNewTaskResultRequestIfNeeded). It comes
 * while the relay activity is still resumed; a person's "no" can only come after the target's
 * screen covered the relay, i.e. after the relay paused.</li>
 * <li>A PendingIntent for a broadcast or a service never produces an activity result.
 * PendingIntent.isActivity() (API 31) tells them apart; the relay sends those without
 * waiting for a result.</li>
 * <li>Android 15 cancels all of an app's PendingIntents when it is force-stopped
 * (developer.android.com/about/versions/15/behavior-changes-all, "Changes to package stopped
 * state"): the send fails with CanceledException; the handle is dropped and the caller must
 * ask the provider for a fresh resolution.</li>
 * </ul>
 */
public final class PendingIntents {
    public static final int RESULT_OK = -1;
    public static final int RESULT_CANCELED = 0;
    /** A result the target activity set (RESULT_OK or a custom code). */
    public static final String RESULT = "result";
    /** RESULT_CANCELED after the target's screen covered the relay: a person said no. */
    public static final String USER_CANCELLED = "user_cancelled";
    /** RESULT_CANCELED before the relay paused: launched into a new task, answer unknowable. */
    public static final String CANCELLED_NEW_TASK = "cancelled_new_task";
    /** A broadcast/service PendingIntent: sent, no result exists. */
    public static final String NO_RESULT_EXPECTED = "no_result_expected";

    private PendingIntents() {
    }

    /**
     * The outcome of an activity launch for result.
     *
     * @param pausedBeforeResult whether the relay activity paused between the launch and the
     *                           result (the target's screen came in front)
     */
    public static String classify(int resultCode, boolean pausedBeforeResult) {
        if (resultCode != RESULT_CANCELED) {
            return RESULT;
        }
        return pausedBeforeResult ? USER_CANCELLED : CANCELLED_NEW_TASK;
    }

    /** Plain words for an outcome, for the reply's {@code detail}. */
    public static String describe(String outcome, long elapsedMs) {
        if (CANCELLED_NEW_TASK.equals(outcome)) {
            return "RESULT_CANCELED after " + elapsedMs + " ms without the relay screen being"
                    + " covered: the PendingIntent starts its activity in a new task"
                    + " (FLAG_ACTIVITY_NEW_TASK or launchMode singleTask/singleInstance), so Android"
                    + " cancels the result at once; the screen may still be showing and the"
                    + " person's answer cannot come back this way (provider bug)";
        }
        if (USER_CANCELLED.equals(outcome)) {
            return "RESULT_CANCELED after the target's screen was shown (" + elapsedMs
                    + " ms): the person declined, or the activity finished without a result";
        }
        if (NO_RESULT_EXPECTED.equals(outcome)) {
            return "not an activity PendingIntent (broadcast or service): sent, no result exists";
        }
        return "the activity returned a result after " + elapsedMs + " ms";
    }

    /** The creator cancelled the PendingIntent (Android 15: force-stop cancels them all). */
    public static RelayException cancelled(String why) {
        return new RelayException(RelayException.NOT_FOUND, "the PendingIntent was cancelled by"
                + " its creator (" + why + "; Android 15 cancels an app's PendingIntents when it is"
                + " force-stopped): the handle was dropped — get a fresh resolution by calling the"
                + " tool again", new TypedBundle().put("pending_intent_cancelled", true)
                .put("handle_dropped", true));
    }

    /** Whether {@code e} is {@link #cancelled}: the dispatcher then drops the handle. */
    public static boolean isCancelled(RelayException e) {
        return e.details != null && Boolean.TRUE.equals(e.details.get("pending_intent_cancelled"));
    }
}
