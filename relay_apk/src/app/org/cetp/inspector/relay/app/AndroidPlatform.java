package org.cetp.inspector.relay.app;

import android.app.PendingIntent;
import android.content.BroadcastReceiver;
import android.content.ComponentName;
import android.content.ContentProviderClient;
import android.content.ContentResolver;
import android.content.Context;
import android.content.Intent;
import android.content.IntentFilter;
import android.content.ServiceConnection;
import android.content.pm.ActivityInfo;
import android.content.pm.ApplicationInfo;
import android.content.pm.PackageInfo;
import android.content.pm.PackageManager;
import android.content.pm.PermissionInfo;
import android.content.pm.ProviderInfo;
import android.content.pm.ResolveInfo;
import android.content.pm.ServiceInfo;
import android.content.res.Resources;
import android.os.Build;
import android.os.Bundle;
import android.os.Handler;
import android.os.HandlerThread;
import android.os.IBinder;
import android.os.Parcel;
import android.os.ParcelFileDescriptor;
import android.os.Process;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.cetp.inspector.relay.core.Bindings;
import org.cetp.inspector.relay.core.Broadcasts;
import org.cetp.inspector.relay.core.HandleTable;
import org.cetp.inspector.relay.core.Platform;
import org.cetp.inspector.relay.core.RelayException;
import org.cetp.inspector.relay.core.TypedBundle;

/**
 * The relay's {@link Platform} on a phone: PackageManager, ContentResolver, Binder and
 * broadcasts, called as an ordinary third-party app. Thin by design: results are shaped
 * by the plain-Java core; every blocking wait here has its own timeout too.
 */
final class AndroidPlatform implements Platform {
    static final String CETP_ACTION = "com.clawseed.action.TOOL_PROVIDER";
    static final String EXT_META = "org.ethereumphone.andyclaw.EXTENSION";
    static final String EXT_SERVICE = "org.ethereumphone.andyclaw.EXTENSION_SERVICE";
    static final String EXT_BROADCAST = "org.ethereumphone.andyclaw.EXTENSION_BROADCAST";
    static final String EXT_ACTION = "org.ethereumphone.andyclaw.EXTENSION_ACTION";
    static final String EXT_AUTHORITY_SUFFIX = ".andyclaw.extension";

    private final Context ctx;
    private final PackageManager pm;
    private final HandlerThread thread = new HandlerThread("relay-callbacks");
    private final Handler handler;
    private volatile EventListener listener;
    private BroadcastReceiver packageReceiver;

    AndroidPlatform(Context ctx) {
        this.ctx = ctx.getApplicationContext();
        this.pm = this.ctx.getPackageManager();
        thread.start();
        handler = new Handler(thread.getLooper());
    }

    void shutdown() {
        setEventListener(null);
        thread.quitSafely();
    }

    // ------------------------------------------------------------------ identity

    @Override
    public Identity identity() {
        String pkg = ctx.getPackageName();
        int code = 0;
        String name = "";
        String[] certs = new String[0];
        String[] requested = new String[0];
        List<String> held = new ArrayList<String>();
        try {
            PackageInfo pi = pm.getPackageInfo(pkg, PackageManager.GET_PERMISSIONS);
            code = (int) Compat.versionCode(pi);
            name = pi.versionName == null ? "" : pi.versionName;
            certs = Compat.certDigests(pm, pkg);
            if (pi.requestedPermissions != null) {
                requested = pi.requestedPermissions.clone();
            }
        } catch (PackageManager.NameNotFoundException e) {
            // cannot happen for our own package
        }
        // what we really hold: a custom permission (ACCESS_TOOLS) defined by a provider
        // installed after the relay is not granted until the relay is reinstalled
        // (PackageManagerService grants at install/update time; Context.checkSelfPermission, API 23)
        for (String p : requested) {
            if (ctx.checkSelfPermission(p) == PackageManager.PERMISSION_GRANTED) {
                held.add(p);
            }
        }
        String[] abis = Build.SUPPORTED_ABIS;
        @SuppressWarnings("deprecation")
        String serial = Build.SERIAL;
        TypedBundle device = new TypedBundle().put("serial", serial == null ? "" : serial)
                .put("manufacturer", Build.MANUFACTURER).put("model", Build.MODEL)
                .put("sdk_int", Build.VERSION.SDK_INT).put("release", Build.VERSION.RELEASE)
                .put("abi", abis != null && abis.length > 0 ? abis[0] : "");
        return new Identity(pkg, Process.myUid(), certs, code, name, device, requested,
                held.toArray(new String[0]));
    }

    // ------------------------------------------------------------------ discover

    @Override
    public TypedBundle[] discover(String only) throws Exception {
        // component → the CETP / AndyClaw actions it answers (PackageInfo has no filters)
        Map<String, List<String>> actions = new HashMap<String, List<String>>();
        TreeSet<String> packages = new TreeSet<String>();
        collect(pm.queryIntentServices(new Intent(CETP_ACTION), PackageManager.GET_META_DATA),
                CETP_ACTION, actions, packages);
        collect(pm.queryIntentServices(new Intent(EXT_SERVICE), 0), EXT_SERVICE, actions, packages);
        collect(pm.queryBroadcastReceivers(new Intent(EXT_BROADCAST), 0), EXT_BROADCAST, actions,
                packages);
        collect(pm.queryIntentActivities(new Intent(EXT_ACTION), 0), EXT_ACTION, actions, packages);
        for (ApplicationInfo ai : pm.getInstalledApplications(PackageManager.GET_META_DATA)) {
            if (ai.metaData != null && ai.metaData.containsKey(EXT_META)) {
                packages.add(ai.packageName);
            }
        }
        List<ProviderInfo> providers = pm.queryContentProviders(null, 0, 0);
        if (providers != null) {
            for (ProviderInfo p : providers) {
                if (p.authority != null && p.authority.endsWith(EXT_AUTHORITY_SUFFIX)) {
                    packages.add(p.packageName);
                }
            }
        }
        if (only != null) {
            // same rule as a full scan: a package that is not a provider/extension is not listed
            boolean listed = packages.contains(only);
            packages.clear();
            if (listed) {
                packages.add(only);
            }
        }
        List<TypedBundle> out = new ArrayList<TypedBundle>();
        for (String pkg : packages) {
            try {
                out.add(record(pkg, actions));
            } catch (PackageManager.NameNotFoundException e) {
                // uninstalled while we looked
            }
        }
        return out.toArray(new TypedBundle[0]);
    }

    private static void collect(List<ResolveInfo> infos, String action,
                                Map<String, List<String>> actions, TreeSet<String> packages) {
        if (infos == null) {
            return;
        }
        for (ResolveInfo ri : infos) {
            String pkg;
            String name;
            if (ri.serviceInfo != null) {
                pkg = ri.serviceInfo.packageName;
                name = ri.serviceInfo.name;
            } else if (ri.activityInfo != null) {
                pkg = ri.activityInfo.packageName;
                name = ri.activityInfo.name;
            } else {
                continue;
            }
            packages.add(pkg);
            String key = pkg + "/" + name;
            List<String> l = actions.get(key);
            if (l == null) {
                l = new ArrayList<String>();
                actions.put(key, l);
            }
            if (!l.contains(action)) {
                l.add(action);
            }
        }
    }

    private String[] actionsOf(Map<String, List<String>> actions, String pkg, String name) {
        List<String> l = actions.get(pkg + "/" + name);
        return l == null ? new String[0] : l.toArray(new String[0]);
    }

    private TypedBundle record(String pkg, Map<String, List<String>> actions)
            throws Exception {
        int flags = PackageManager.GET_SERVICES | PackageManager.GET_PROVIDERS
                | PackageManager.GET_RECEIVERS | PackageManager.GET_ACTIVITIES
                | PackageManager.GET_PERMISSIONS | PackageManager.GET_META_DATA
                | PackageManager.GET_DISABLED_COMPONENTS;
        PackageInfo pi = pm.getPackageInfo(pkg, flags);
        ApplicationInfo ai = pi.applicationInfo;
        Intent launch = pm.getLaunchIntentForPackage(pkg);
        ComponentName launchComponent = launch == null ? null : launch.getComponent();
        TypedBundle r = new TypedBundle()
                .put("package", pkg)
                .put("label", String.valueOf(ai.loadLabel(pm)))
                .put("uid", ai.uid)
                .put("version_code", Compat.versionCode(pi))
                .put("version_name", pi.versionName)
                .put("cert_sha256", Compat.certDigests(pm, pkg))
                .put("shared_user_id", pi.sharedUserId)
                .put("launch_activity", launchComponent == null ? null : launchComponent.getClassName())
                .put("app_meta_data", meta(ai.metaData));
        List<TypedBundle> services = new ArrayList<TypedBundle>();
        if (pi.services != null) {
            for (ServiceInfo s : pi.services) {
                services.add(new TypedBundle().put("name", s.name).put("exported", s.exported)
                        .put("enabled", s.enabled).put("permission", s.permission)
                        .put("actions", actionsOf(actions, pkg, s.name))
                        .put("meta_data", meta(s.metaData)));
            }
        }
        List<TypedBundle> providers = new ArrayList<TypedBundle>();
        if (pi.providers != null) {
            for (ProviderInfo p : pi.providers) {
                providers.add(new TypedBundle().put("name", p.name).put("authority", p.authority)
                        .put("exported", p.exported).put("enabled", p.enabled)
                        .put("permission", p.readPermission != null
                                && p.readPermission.equals(p.writePermission) ? p.readPermission : null)
                        .put("read_permission", p.readPermission)
                        .put("write_permission", p.writePermission)
                        .put("init_order", p.initOrder));
            }
        }
        r.put("services", services.toArray(new TypedBundle[0]));
        r.put("providers", providers.toArray(new TypedBundle[0]));
        r.put("receivers", activities(pi.receivers, pkg, actions));
        r.put("activities", activities(pi.activities, pkg, actions));
        List<TypedBundle> perms = new ArrayList<TypedBundle>();
        if (pi.permissions != null) {
            for (PermissionInfo p : pi.permissions) {
                perms.add(new TypedBundle().put("name", p.name).put("protection_level",
                        p.protectionLevel));
            }
        }
        r.put("permissions", perms.toArray(new TypedBundle[0]));
        return r;
    }

    private TypedBundle[] activities(ActivityInfo[] infos, String pkg,
                                     Map<String, List<String>> actions) {
        if (infos == null) {
            return new TypedBundle[0];
        }
        TypedBundle[] out = new TypedBundle[infos.length];
        for (int i = 0; i < infos.length; i++) {
            ActivityInfo a = infos[i];
            out[i] = new TypedBundle().put("name", a.name).put("exported", a.exported)
                    .put("enabled", a.enabled).put("permission", a.permission)
                    .put("actions", actionsOf(actions, pkg, a.name));
        }
        return out;
    }

    /** Manifest meta-data keep their types (@resource values arrive as int). */
    private static TypedBundle meta(Bundle b) throws RelayException {
        TypedBundle t = BundleMapper.fromAndroid(b, null);
        return t == null ? new TypedBundle() : t;
    }

    // ------------------------------------------------------------------ call

    @Override
    public TypedBundle call(String authority, String method, String arg, TypedBundle extras,
                            int timeoutMs, HandleTable handles) throws Exception {
        ContentResolver cr = ctx.getContentResolver();
        ContentProviderClient client = cr.acquireUnstableContentProviderClient(authority);
        if (client == null) {
            throw new RelayException(RelayException.NOT_FOUND, "no provider with authority '"
                    + authority + "' is visible to the relay");
        }
        try {
            Bundle in = BundleMapper.toAndroid(extras, handles);
            Bundle reply = client.call(method, arg, in);
            if (reply != null) {
                reply.setClassLoader(ctx.getClassLoader());
            }
            return BundleMapper.fromAndroid(reply, handles);
        } catch (IllegalArgumentException e) {
            throw new RelayException(RelayException.NOT_FOUND, "provider rejected the call: "
                    + e.getMessage());
        } finally {
            releaseClient(client);
        }
    }

    @SuppressWarnings("deprecation")
    private static void releaseClient(ContentProviderClient c) {
        c.release();
    }

    // ------------------------------------------------------------------ handles

    @Override
    public FileSource openFile(Object nativeHandle) throws Exception {
        if (!(nativeHandle instanceof ParcelFileDescriptor)) {
            throw new RelayException(RelayException.BAD_ARGS, "that handle is not a file descriptor");
        }
        final ParcelFileDescriptor pfd = (ParcelFileDescriptor) nativeHandle;
        // Read the original, not a dup(): dup() builds a PFD without the reliable pipe's comm
        // channel, so a provider that dies or closeWithError()s mid-stream would look like a
        // clean, short file (ParcelFileDescriptor.dup / canDetectErrors). At EOF checkError()
        // throws instead, which the core reports as IPC_FAILED. The stream owns the PFD now; a
        // pipe can be read once anyway, and close_handle closing it again is harmless.
        long size = BundleMapper.fileSize(pfd);
        return new FileSource(new java.io.FilterInputStream(
                new ParcelFileDescriptor.AutoCloseInputStream(pfd)) {
            @Override
            public int read() throws IOException {
                int r = super.read();
                if (r < 0) {
                    checkAtEof(pfd);
                }
                return r;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int r = super.read(b, off, len);
                if (r < 0) {
                    checkAtEof(pfd);
                }
                return r;
            }
        }, size);
    }

    /** ParcelFileDescriptor.checkError (API 19): throws when the writer failed or died. */
    private static void checkAtEof(ParcelFileDescriptor pfd) throws IOException {
        if (pfd.canDetectErrors()) {
            pfd.checkError();
        }
    }

    @Override
    public void release(Object nativeHandle) {
        if (nativeHandle instanceof ParcelFileDescriptor) {
            try {
                ((ParcelFileDescriptor) nativeHandle).close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }

    @Override
    public ActivityResult launchPendingIntent(Object nativeHandle, int timeoutMs) throws Exception {
        if (!(nativeHandle instanceof PendingIntent)) {
            throw new RelayException(RelayException.BAD_ARGS, "that handle is not a PendingIntent");
        }
        return RelayActivity.launchForResult(ctx, (PendingIntent) nativeHandle, timeoutMs);
    }

    // ------------------------------------------------------------------ bind + transact

    @Override
    public TransactResult bindTransact(String pkg, String action, String descriptor, int code,
                                       String[] strings, int timeoutMs) throws Exception {
        final AtomicReference<IBinder> binder = new AtomicReference<IBinder>();
        final CountDownLatch connected = new CountDownLatch(1);
        final java.util.concurrent.atomic.AtomicBoolean nullBinding =
                new java.util.concurrent.atomic.AtomicBoolean();
        ServiceConnection conn = new ServiceConnection() {
            @Override
            public void onServiceConnected(ComponentName name, IBinder service) {
                binder.set(service);
                connected.countDown();
            }

            @Override
            public void onServiceDisconnected(ComponentName name) {
                binder.set(null);
            }

            // API 28: the service returned null from onBind (never called before 28)
            public void onNullBinding(ComponentName name) {
                nullBinding.set(true);
                connected.countDown();
            }
        };
        Intent intent = new Intent(action).setPackage(pkg);
        boolean bound = ctx.bindService(intent, conn, Context.BIND_AUTO_CREATE);
        try {
            if (!bound) {
                throw new RelayException(RelayException.NOT_FOUND, "no service for action '"
                        + action + "' in " + pkg + " (or the relay may not bind it)");
            }
            String what = "the " + action + " service of " + pkg;
            if (!connected.await(timeoutMs, TimeUnit.MILLISECONDS)) {
                throw Bindings.noConnection(Build.VERSION.SDK_INT, what, timeoutMs);
            }
            IBinder b = binder.get();
            if (b == null) {
                throw nullBinding.get() ? Bindings.nullBinding(what) : new RelayException(
                        RelayException.IPC_FAILED, what + " disconnected before the transaction");
            }
            Parcel data = Parcel.obtain();
            Parcel reply = Parcel.obtain();
            try {
                data.writeInterfaceToken(descriptor);
                for (String s : strings) {
                    data.writeString(s);
                }
                if (!b.transact(code, data, reply, 0)) {
                    throw new RelayException(RelayException.IPC_FAILED, "transaction " + code
                            + " was not handled by the service");
                }
                try {
                    reply.readException();
                } catch (Exception e) {
                    return new TransactResult(new TypedBundle().put("class", e.getClass().getName())
                            .put("message", e.getMessage()), null);
                }
                return new TransactResult(null, reply.readString());
            } finally {
                data.recycle();
                reply.recycle();
            }
        } finally {
            if (bound) {
                try {
                    ctx.unbindService(conn);
                } catch (IllegalArgumentException ignored) {
                    // not bound any more
                }
            }
        }
    }

    // ------------------------------------------------------------------ broadcast

    @Override
    public BroadcastResult broadcast(String pkg, String action, TypedBundle extras,
                                     final String replyAction, boolean includeStopped,
                                     int timeoutMs) throws Exception {
        final AtomicReference<Bundle> reply = new AtomicReference<Bundle>();
        final CountDownLatch got = new CountDownLatch(1);
        // stopped state before sending: a stopped target gets nothing without the flag
        Boolean stopped = null;
        try {
            stopped = Broadcasts.isStopped(pm.getApplicationInfo(pkg, 0).flags);
        } catch (PackageManager.NameNotFoundException e) {
            throw new RelayException(RelayException.NOT_FOUND, "package " + pkg
                    + " is not installed (or not visible to the relay)");
        }
        BroadcastReceiver receiver = new BroadcastReceiver() {
            @Override
            public void onReceive(Context c, Intent intent) {
                // exported receiver: accept only the per-call action, and only the first reply
                if (intent == null || !replyAction.equals(intent.getAction())
                        || got.getCount() == 0) {
                    return;
                }
                Bundle e;
                try {
                    e = intent.getExtras();
                } catch (RuntimeException ex) { // BadParcelableException from a hostile sender
                    e = null;
                }
                reply.set(e == null ? new Bundle() : e);
                got.countDown();
            }
        };
        Compat.registerExportedReceiver(ctx, receiver, new IntentFilter(replyAction), handler);
        try {
            Intent intent = new Intent(action).setPackage(pkg);
            Bundle ex = BundleMapper.toAndroid(extras, null);
            if (ex != null) {
                intent.putExtras(ex);
            }
            intent.putExtra("response_action", replyAction);
            intent.addFlags(Broadcasts.intentFlags(includeStopped));
            ctx.sendBroadcast(intent);
            if (!got.await(timeoutMs, TimeUnit.MILLISECONDS)) {
                return new BroadcastResult(null, true, stopped);
            }
            Bundle b = reply.get();
            b.setClassLoader(ctx.getClassLoader());
            return new BroadcastResult(BundleMapper.fromAndroid(b, null), false, stopped);
        } finally {
            ctx.unregisterReceiver(receiver);
        }
    }

    // ------------------------------------------------------------------ activities, resources

    @Override
    public ActivityStart startActivity(String pkg, String action, TypedBundle extras)
            throws Exception {
        Intent intent = new Intent(action).setPackage(pkg);
        Bundle ex = BundleMapper.toAndroid(extras, null);
        if (ex != null) {
            intent.putExtras(ex);
        }
        ResolveInfo ri = pm.resolveActivity(intent, 0);
        if (ri == null || ri.activityInfo == null) {
            return new ActivityStart(false, null);
        }
        ComponentName cn = new ComponentName(ri.activityInfo.packageName, ri.activityInfo.name);
        intent.setComponent(cn);
        // throws NEEDS_FOREGROUND / SECURITY / NOT_FOUND rather than claim a launch
        RelayActivity.startFromRelay(ctx, intent, "start_activity", 10000);
        return new ActivityStart(true, cn.flattenToString());
    }

    @Override
    public ResourceData readResource(String pkg, int resourceId, int maxBytes) throws Exception {
        Resources res;
        try {
            res = pm.getResourcesForApplication(pkg);
        } catch (PackageManager.NameNotFoundException e) {
            throw new RelayException(RelayException.NOT_FOUND, "package " + pkg + " is not installed");
        }
        InputStream in;
        String name;
        try {
            in = res.openRawResource(resourceId);
            name = res.getResourceName(resourceId);
        } catch (Resources.NotFoundException e) {
            throw new RelayException(RelayException.NOT_FOUND, "no resource 0x"
                    + Integer.toHexString(resourceId) + " in " + pkg);
        }
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
                if (out.size() > maxBytes) {
                    throw new RelayException(RelayException.TOO_LARGE, "resource 0x"
                            + Integer.toHexString(resourceId) + " is larger than " + maxBytes + " bytes");
                }
            }
            return new ResourceData(out.toByteArray(), name);
        } finally {
            in.close();
        }
    }

    @Override
    public WakeResult wakeProvider(String authority, String pkg, String mode, int timeoutMs)
            throws Exception {
        if ("acquire".equals(mode)) {
            ContentProviderClient c = ctx.getContentResolver().acquireContentProviderClient(authority);
            if (c == null) {
                return new WakeResult(false, "no provider with authority '" + authority + "'");
            }
            releaseClient(c);
            return new WakeResult(true, "provider acquired (its process is running)");
        }
        Intent launch = pm.getLaunchIntentForPackage(pkg);
        if (launch == null) {
            return new WakeResult(false, pkg + " has no launcher activity");
        }
        RelayActivity.startFromRelay(ctx, launch, "wake_provider mode=launch", timeoutMs);
        return new WakeResult(true, "launched " + launch.getComponent().flattenToShortString());
    }

    // ------------------------------------------------------------------ events

    @Override
    public synchronized void setEventListener(EventListener l) {
        listener = l;
        if (l != null && packageReceiver == null) {
            packageReceiver = new BroadcastReceiver() {
                @Override
                public void onReceive(Context c, Intent intent) {
                    EventListener target = listener;
                    if (target == null || intent.getData() == null) {
                        return;
                    }
                    boolean replacing = intent.getBooleanExtra(Intent.EXTRA_REPLACING, false);
                    String a = intent.getAction();
                    String change;
                    if (Intent.ACTION_PACKAGE_REPLACED.equals(a)) {
                        change = "replaced";
                    } else if (Intent.ACTION_PACKAGE_ADDED.equals(a) && !replacing) {
                        change = "added";
                    } else if (Intent.ACTION_PACKAGE_REMOVED.equals(a) && !replacing) {
                        change = "removed";
                    } else {
                        return;
                    }
                    target.onEvent(new TypedBundle().put("event", "package_changed")
                            .put("change", change)
                            .put("package", intent.getData().getSchemeSpecificPart()));
                }
            };
            IntentFilter f = new IntentFilter();
            f.addAction(Intent.ACTION_PACKAGE_ADDED);
            f.addAction(Intent.ACTION_PACKAGE_REMOVED);
            f.addAction(Intent.ACTION_PACKAGE_REPLACED);
            f.addDataScheme("package");
            Compat.registerSystemReceiver(ctx, packageReceiver, f, handler);
        } else if (l == null && packageReceiver != null) {
            ctx.unregisterReceiver(packageReceiver);
            packageReceiver = null;
        }
    }
}
