package org.cetp.inspector.relay.app;

import android.app.Activity;
import android.app.PendingIntent;
import android.content.Context;
import android.content.Intent;
import android.content.IntentSender;
import android.os.Build;
import android.os.Bundle;
import android.os.Handler;
import android.os.Looper;
import android.util.Log;
import android.widget.TextView;

import java.lang.ref.WeakReference;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.cetp.inspector.relay.R;
import org.cetp.inspector.relay.core.ActivityStarts;
import org.cetp.inspector.relay.core.PendingIntents;
import org.cetp.inspector.relay.core.Platform;
import org.cetp.inspector.relay.core.RelayException;

/**
 * The relay's only screen. Started from adb shell (protected by android.permission.DUMP,
 * which shell holds and apps cannot get without adb), it starts {@link RelayService} with
 * the session extras and stays resumed so PendingIntents can be launched from a foreground
 * activity and their result returned.
 */
public final class RelayActivity extends Activity {
    private static final int REQUEST_PENDING_INTENT = 1;
    private static final Object LOCK = new Object();
    private static WeakReference<RelayActivity> resumed = new WeakReference<RelayActivity>(null);
    private static CountDownLatch resumedLatch = new CountDownLatch(1);
    private static Pending pending;
    /** onPause calls so far: a launch compares it to tell "covered by the target" apart. */
    private static int pauses;

    /** One PendingIntent launch waiting for onActivityResult. */
    private static final class Pending {
        final CountDownLatch done = new CountDownLatch(1);
        long startedAt;
        int pausesAtLaunch;
        final AtomicReference<Platform.ActivityResult> result =
                new AtomicReference<Platform.ActivityResult>();
    }

    @Override
    protected void onCreate(Bundle savedInstanceState) {
        super.onCreate(savedInstanceState);
        TextView text = new TextView(this);
        text.setText(R.string.session_screen);
        text.setPadding(48, 48, 48, 48);
        setContentView(text);
        forwardSession(getIntent());
    }

    @Override
    protected void onNewIntent(Intent intent) {
        super.onNewIntent(intent);
        forwardSession(intent);
    }

    /** Hands socket name and token to the service; never logs them. */
    private void forwardSession(Intent intent) {
        if (intent == null || !intent.hasExtra(RelayService.EXTRA_SOCKET)) {
            return;
        }
        Intent svc = new Intent(this, RelayService.class);
        svc.putExtra(RelayService.EXTRA_SOCKET, intent.getStringExtra(RelayService.EXTRA_SOCKET));
        svc.putExtra(RelayService.EXTRA_TOKEN, intent.getStringExtra(RelayService.EXTRA_TOKEN));
        try {
            Compat.startForegroundService(this, svc);
        } catch (RuntimeException e) {
            // e.g. ForegroundServiceStartNotAllowedException: report it, do not crash
            Log.e(RelayService.TAG, "cannot start the relay service: " + e);
        }
        // the extras are secrets: drop them from the activity's intent
        setIntent(new Intent(this, RelayActivity.class));
    }

    @Override
    protected void onResume() {
        super.onResume();
        synchronized (LOCK) {
            resumed = new WeakReference<RelayActivity>(this);
            resumedLatch.countDown();
        }
    }

    @Override
    protected void onPause() {
        synchronized (LOCK) {
            pauses++;
            if (resumed.get() == this) {
                resumed = new WeakReference<RelayActivity>(null);
                resumedLatch = new CountDownLatch(1);
            }
        }
        super.onPause();
    }

    @Override
    protected void onActivityResult(int requestCode, int resultCode, Intent data) {
        super.onActivityResult(requestCode, resultCode, data);
        if (requestCode != REQUEST_PENDING_INTENT) {
            return;
        }
        Pending p;
        synchronized (LOCK) {
            p = pending;
            pending = null;
        }
        if (p == null) {
            return;
        }
        boolean paused;
        synchronized (LOCK) {
            paused = pauses != p.pausesAtLaunch;
        }
        String outcome = PendingIntents.classify(resultCode, paused);
        long elapsed = System.currentTimeMillis() - p.startedAt;
        Platform.ActivityResult r;
        try {
            Bundle extras = data == null ? null : data.getExtras();
            if (extras != null) {
                extras.setClassLoader(getClassLoader());
            }
            r = new Platform.ActivityResult(resultCode, BundleMapper.fromAndroid(extras, null),
                    outcome, elapsed);
        } catch (RelayException e) {
            r = new Platform.ActivityResult(resultCode, null, outcome, elapsed);
        } catch (RuntimeException e) {
            // BadParcelableException & co. from another app's result: never on the main thread
            Log.w(RelayService.TAG, "unreadable activity result extras: " + e);
            r = new Platform.ActivityResult(resultCode, null, outcome, elapsed);
        }
        p.result.set(r);
        p.done.countDown();
    }

    /** Brings the relay activity to the front (needs a BAL exemption when in background). */
    private static RelayActivity awaitResumed(Context ctx, long timeoutMs) throws Exception {
        CountDownLatch latch;
        synchronized (LOCK) {
            RelayActivity a = resumed.get();
            if (a != null) {
                return a;
            }
            latch = resumedLatch;
        }
        Intent i = new Intent(ctx, RelayActivity.class)
                .addFlags(Intent.FLAG_ACTIVITY_NEW_TASK | Intent.FLAG_ACTIVITY_SINGLE_TOP);
        try {
            ctx.startActivity(i); // a background start: Android 10+ may drop it silently
        } catch (RuntimeException e) {
            throw ActivityStarts.needsForeground("launching a PendingIntent",
                    ActivityStarts.RELAY_ACTIVITY);
        }
        if (!latch.await(Math.min(timeoutMs, 10000), TimeUnit.MILLISECONDS)) {
            throw ActivityStarts.needsForeground("launching a PendingIntent",
                    ActivityStarts.RELAY_ACTIVITY);
        }
        synchronized (LOCK) {
            RelayActivity a = resumed.get();
            if (a == null) {
                throw ActivityStarts.needsForeground("launching a PendingIntent",
                        ActivityStarts.RELAY_ACTIVITY);
            }
            return a;
        }
    }

    static Platform.ActivityResult launchForResult(Context ctx, final PendingIntent pi, int timeoutMs)
            throws Exception {
        long start = System.currentTimeMillis();
        if (Boolean.FALSE.equals(BundleMapper.isActivity(pi))) {
            // a broadcast/service PendingIntent (API 31+ can tell): no activity result will come
            try {
                pi.send();
            } catch (PendingIntent.CanceledException e) {
                throw PendingIntents.cancelled("CanceledException on send");
            }
            return new Platform.ActivityResult(PendingIntents.RESULT_CANCELED, null,
                    PendingIntents.NO_RESULT_EXPECTED, System.currentTimeMillis() - start);
        }
        final RelayActivity activity = awaitResumed(ctx, timeoutMs);
        final Pending p = new Pending();
        synchronized (LOCK) {
            if (pending != null) {
                throw new RelayException(RelayException.BUSY, "another PendingIntent is on screen");
            }
            pending = p;
            p.pausesAtLaunch = pauses;
        }
        p.startedAt = System.currentTimeMillis();
        final AtomicReference<Exception> failure = new AtomicReference<Exception>();
        final CountDownLatch started = new CountDownLatch(1);
        new Handler(Looper.getMainLooper()).post(new Runnable() {
            @Override
            public void run() {
                try {
                    activity.startIntentSenderForResult(pi.getIntentSender(), REQUEST_PENDING_INTENT,
                            null, 0, 0, 0, Compat.pendingIntentLaunchOptions());
                } catch (IntentSender.SendIntentException e) {
                    failure.set(PendingIntents.cancelled("SendIntentException"));
                } catch (RuntimeException e) {
                    failure.set(e);
                }
                started.countDown();
            }
        });
        try {
            started.await(timeoutMs, TimeUnit.MILLISECONDS);
            if (failure.get() != null) {
                throw failure.get();
            }
            if (!p.done.await(timeoutMs, TimeUnit.MILLISECONDS)) {
                boolean covered;
                synchronized (LOCK) {
                    covered = pauses != p.pausesAtLaunch;
                }
                throw new RelayException(RelayException.TIMEOUT, "no result from the PendingIntent's"
                        + " activity within " + timeoutMs + " ms" + (covered ? " (its screen came"
                        + " up; the person has not answered)" : " and no screen covered the relay:"
                        + " before Android 12 the relay cannot tell a broadcast or service"
                        + " PendingIntent, which never returns a result, from an activity"));
            }
            return p.result.get();
        } finally {
            synchronized (LOCK) {
                if (pending == p) {
                    pending = null;
                }
            }
        }
    }

    /**
     * Starts another app's activity from the resumed relay activity and returns only once
     * Android accepted it. Not resumed on Android 10+: NEEDS_FOREGROUND (a background start
     * would be dropped silently); before 10 a background start is allowed. What
     * startActivity throws (SecurityException, ActivityNotFoundException) becomes a typed
     * error instead of an exception on the main looper, which would kill the relay.
     */
    static void startFromRelay(Context ctx, final Intent intent, String what, long timeoutMs)
            throws RelayException, InterruptedException {
        final String component = intent.getComponent() == null ? String.valueOf(intent.getPackage())
                : intent.getComponent().flattenToShortString();
        final RelayActivity a;
        synchronized (LOCK) {
            a = resumed.get();
        }
        if (a == null) {
            if (ActivityStarts.needsRelayInFront(Build.VERSION.SDK_INT, false)) {
                throw ActivityStarts.needsForeground(what, component);
            }
            try {
                ctx.startActivity(new Intent(intent).addFlags(Intent.FLAG_ACTIVITY_NEW_TASK));
            } catch (RuntimeException e) {
                throw ActivityStarts.startFailed(e, component);
            }
            return;
        }
        final AtomicReference<Object> outcome = new AtomicReference<Object>();
        final CountDownLatch done = new CountDownLatch(1);
        new Handler(Looper.getMainLooper()).post(new Runnable() {
            @Override
            public void run() {
                try {
                    synchronized (LOCK) {
                        if (resumed.get() != a) { // paused since we looked: a background start
                            outcome.set(Boolean.FALSE);
                            return;
                        }
                    }
                    a.startActivity(intent);
                    outcome.set(Boolean.TRUE);
                } catch (RuntimeException e) {
                    outcome.set(e);
                } finally {
                    done.countDown();
                }
            }
        });
        if (!done.await(Math.min(timeoutMs, 10000), TimeUnit.MILLISECONDS)) {
            throw new RelayException(RelayException.TIMEOUT, "the relay's main thread did not"
                    + " start " + component + " in time; nothing is known to have launched");
        }
        Object o = outcome.get();
        if (o instanceof RuntimeException) {
            throw ActivityStarts.startFailed((RuntimeException) o, component);
        }
        if (!Boolean.TRUE.equals(o)) {
            throw ActivityStarts.needsForeground(what, component);
        }
    }
}
