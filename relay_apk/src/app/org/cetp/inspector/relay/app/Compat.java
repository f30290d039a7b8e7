package org.cetp.inspector.relay.app;

import android.app.ActivityOptions;
import android.app.Notification;
import android.app.Service;
import android.content.BroadcastReceiver;
import android.content.Context;
import android.content.IntentFilter;
import android.content.pm.PackageInfo;
import android.content.pm.PackageManager;
import android.content.pm.Signature;
import android.os.Build;
import android.os.Bundle;
import android.os.Handler;

import java.lang.reflect.Method;

import org.cetp.inspector.relay.core.Digests;

/**
 * APIs above the compile SDK (23), reached by reflection so the APK builds against
 * android-23.jar yet uses the newest behaviour where the device has it.
 */
final class Compat {
    static final int GET_SIGNING_CERTIFICATES = 0x08000000; // API 28
    static final int RECEIVER_EXPORTED = 0x2; // API 33
    static final int RECEIVER_NOT_EXPORTED = 0x4; // API 33
    static final int FOREGROUND_SERVICE_TYPE_DATA_SYNC = 0x1; // API 29
    static final int MODE_BACKGROUND_ACTIVITY_START_ALLOWED = 1; // API 34

    private Compat() {
    }

    /** Signing certificate SHA-256 digests, newest API first, GET_SIGNATURES as fallback. */
    @SuppressWarnings("deprecation")
    static String[] certDigests(PackageManager pm, String pkg)
            throws PackageManager.NameNotFoundException {
        if (Build.VERSION.SDK_INT >= 28) {
            try {
                PackageInfo pi = pm.getPackageInfo(pkg, GET_SIGNING_CERTIFICATES);
                Object info = PackageInfo.class.getField("signingInfo").get(pi);
                if (info != null) {
                    boolean multi = (Boolean) info.getClass().getMethod("hasMultipleSigners")
                            .invoke(info);
                    Signature[] sigs = (Signature[]) info.getClass()
                            .getMethod(multi ? "getApkContentsSigners" : "getSigningCertificateHistory")
                            .invoke(info);
                    if (sigs != null && !multi && sigs.length > 1) {
                        // history is oldest first; the current signer is the last entry
                        sigs = new Signature[] {sigs[sigs.length - 1]};
                    }
                    if (sigs != null) {
                        return digests(sigs);
                    }
                }
            } catch (PackageManager.NameNotFoundException e) {
                throw e;
            } catch (Exception e) {
                // fall through to GET_SIGNATURES
            }
        }
        PackageInfo pi = pm.getPackageInfo(pkg, PackageManager.GET_SIGNATURES);
        return digests(pi.signatures == null ? new Signature[0] : pi.signatures);
    }

    private static String[] digests(Signature[] sigs) {
        String[] out = new String[sigs.length];
        for (int i = 0; i < sigs.length; i++) {
            out[i] = Digests.sha256Hex(sigs[i].toByteArray());
        }
        return out;
    }

    @SuppressWarnings("deprecation")
    static long versionCode(PackageInfo pi) {
        if (Build.VERSION.SDK_INT >= 28) {
            try {
                return (Long) PackageInfo.class.getMethod("getLongVersionCode").invoke(pi);
            } catch (Exception e) {
                // fall back
            }
        }
        return pi.versionCode;
    }

    /** Registers a receiver other apps may send to (RECEIVER_EXPORTED on API 33+). */
    static void registerExportedReceiver(Context ctx, BroadcastReceiver r, IntentFilter f,
                                         Handler handler) {
        registerReceiver(ctx, r, f, handler, RECEIVER_EXPORTED);
    }

    /** Registers a receiver for system broadcasts only (RECEIVER_NOT_EXPORTED on API 33+). */
    static void registerSystemReceiver(Context ctx, BroadcastReceiver r, IntentFilter f,
                                       Handler handler) {
        registerReceiver(ctx, r, f, handler, RECEIVER_NOT_EXPORTED);
    }

    private static void registerReceiver(Context ctx, BroadcastReceiver r, IntentFilter f,
                                         Handler handler, int flag) {
        if (Build.VERSION.SDK_INT >= 33) {
            Method m;
            try {
                m = Context.class.getMethod("registerReceiver", BroadcastReceiver.class,
                        IntentFilter.class, String.class, Handler.class, int.class);
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException("registerReceiver with flags is missing on API "
                        + Build.VERSION.SDK_INT);
            }
            invokeRethrowing(m, ctx, r, f, null, handler, flag);
            return;
        }
        ctx.registerReceiver(r, f, null, handler);
    }

    /** startForeground with a service type on API 29+ (required when targeting 34). */
    static void startForeground(Service s, int id, Notification n) {
        if (Build.VERSION.SDK_INT >= 29) {
            try {
                Method m = Service.class.getMethod("startForeground", int.class,
                        Notification.class, int.class);
                m.invoke(s, id, n, FOREGROUND_SERVICE_TYPE_DATA_SYNC);
                return;
            } catch (java.lang.reflect.InvocationTargetException e) {
                Throwable c = e.getCause();
                throw c instanceof RuntimeException ? (RuntimeException) c
                        : new IllegalStateException(String.valueOf(c));
            } catch (Exception e) {
                // fall back to the untyped call
            }
        }
        s.startForeground(id, n);
    }

    /**
     * ActivityOptions that allow the PendingIntent's creator-side background activity start
     * (API 34+: setPendingIntentBackgroundActivityStartMode(ALLOWED)); null before 34.
     */
    static Bundle pendingIntentLaunchOptions() {
        if (Build.VERSION.SDK_INT < 34) {
            return null;
        }
        try {
            ActivityOptions o = ActivityOptions.makeBasic();
            ActivityOptions.class.getMethod("setPendingIntentBackgroundActivityStartMode", int.class)
                    .invoke(o, MODE_BACKGROUND_ACTIVITY_START_ALLOWED);
            return o.toBundle();
        } catch (Exception e) {
            return null;
        }
    }

    /** Notification channel (API 26, above the compile SDK) for the foreground notice. */
    static Notification.Builder notificationBuilder(Context ctx, String channelId, String name) {
        try {
            Class<?> chClass = Class.forName("android.app.NotificationChannel");
            Object ch = chClass.getConstructor(String.class, CharSequence.class, int.class)
                    .newInstance(channelId, name, 2 /* IMPORTANCE_LOW */);
            Object nm = ctx.getSystemService(Context.NOTIFICATION_SERVICE);
            nm.getClass().getMethod("createNotificationChannel", chClass).invoke(nm, ch);
            return Notification.Builder.class.getConstructor(Context.class, String.class)
                    .newInstance(ctx, channelId);
        } catch (Exception e) {
            return new Notification.Builder(ctx);
        }
    }

    /**
     * Context.startForegroundService (API 26). Falls back to startService only when the method
     * does not exist; what the method throws (ForegroundServiceStartNotAllowedException on
     * 12+, SecurityException) is rethrown: startService would then fail with "app is in
     * background" (IllegalStateException) and hide the real reason.
     */
    static void startForegroundService(Context ctx, android.content.Intent intent) {
        Method m;
        try {
            m = Context.class.getMethod("startForegroundService", android.content.Intent.class);
        } catch (NoSuchMethodException e) {
            ctx.startService(intent);
            return;
        }
        invokeRethrowing(m, ctx, intent);
    }

    /** Calls {@code m}; what the method itself throws is rethrown as is (unchecked). */
    private static void invokeRethrowing(Method m, Object target, Object... args) {
        try {
            m.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            Throwable c = e.getCause();
            throw c instanceof RuntimeException ? (RuntimeException) c
                    : new IllegalStateException(String.valueOf(c));
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(m.getName() + ": " + e);
        }
    }
}
