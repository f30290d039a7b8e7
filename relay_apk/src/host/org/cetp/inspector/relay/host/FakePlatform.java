package org.cetp.inspector.relay.host;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.cetp.inspector.relay.core.Digests;
import org.cetp.inspector.relay.core.Handles;
import org.cetp.inspector.relay.core.HandleTable;
import org.cetp.inspector.relay.core.Platform;
import org.cetp.inspector.relay.core.RelayException;
import org.cetp.inspector.relay.core.TypedBundle;
import org.cetp.inspector.relay.core.Utf8;

/**
 * A fixed fake device for host tests: one CETP provider package (negotiate, list_tools, a
 * large file result, a PendingIntent resolution, typed echo) and one AndyClaw extension
 * (bound service, broadcast, activity, raw manifest resource). Deterministic answers.
 * Its v2 replies (list_tools, execute_tool: inline get_quote, file export_history) are what
 * a conforming provider sends, so the Python consumer engine can drive it end to end.
 *
 * <p>It plays Android under an API level ({@link Config}) with the rules of
 * {@link AndroidRules} (the Python rules layer's, checked against the same vectors): its
 * provider is protected by com.clawseed.permission.ACCESS_TOOLS as real ClawSeed providers
 * are, and the relay holds what its manifest requests (by default the shipped relay's);
 * broadcasts skip stopped packages; the extension's {@link #NULL_BIND_ACTION} service
 * returns a null binder.
 */
public final class FakePlatform implements Platform {
    public static final String ACCESS_TOOLS = "com.clawseed.permission.ACCESS_TOOLS";
    /** A service action of the extension whose onBind returns null (rule null_binding). */
    public static final String NULL_BIND_ACTION = "com.example.fakeextension.NULL_BIND";
    public static final String RELAY_PACKAGE = "org.cetp.inspector.relay";
    public static final int RELAY_UID = 10234;
    public static final int PROVIDER_UID = 10101;
    /** The normal permissions the shipped relay requests (relay_apk/AndroidManifest.xml). */
    public static final Set<String> SHIPPED_RELAY_GRANTS = Collections.unmodifiableSet(
            new HashSet<String>(Arrays.asList("android.permission.QUERY_ALL_PACKAGES",
                    "android.permission.FOREGROUND_SERVICE",
                    "android.permission.FOREGROUND_SERVICE_DATA_SYNC", ACCESS_TOOLS)));

    /** The Android the fake device plays and how its provider declares itself. */
    public static final class Config {
        public int api = 34;
        public Set<String> relayGranted = SHIPPED_RELAY_GRANTS;
        public boolean providerExported = true;
        public String providerPermission = ACCESS_TOOLS;
        public String providerReadPermission;
        public String providerWritePermission;
    }

    private final Config config;
    private final Set<String> stopped = Collections.newSetFromMap(
            new ConcurrentHashMap<String, Boolean>());

    public FakePlatform() {
        this(new Config());
    }

    public FakePlatform(Config config) {
        this.config = config;
        this.heldPermissions = heldFrom(config.relayGranted);
    }

    /** force-stop: the package is stopped until one of its components is started. */
    public void forceStop(String pkg) {
        stopped.add(pkg);
    }

    private void started(String pkg) {
        stopped.remove(pkg);
    }

    public static final String PROVIDER_PACKAGE = "com.example.fakeprovider";
    public static final String AUTHORITY = "com.example.fakeprovider.clawseed.tools";
    public static final String EXTENSION_PACKAGE = "com.example.fakeextension";
    public static final String EXTENSION_DESCRIPTOR = "org.ethereumphone.andyclaw.IExtension";
    public static final int MANIFEST_RESOURCE = 0x7f0f0000;
    /** The large result: 300 000 bytes, so it streams as several chunks. */
    public static final byte[] LARGE_FILE = largeFile();
    public static final String EXTENSION_MANIFEST = "[{\"name\":\"greet\",\"description\":"
            + "\"Returns a friendly greeting\",\"inputSchema\":{\"type\":\"object\","
            + "\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}]";
    /** What the export_history tool streams back as its file result (JSON, ~200 kB). */
    public static final byte[] EXPORT_FILE = exportFile();
    private static final String READ_ANNOTATIONS = "\"annotations\":{\"effect\":\"read\","
            + "\"risk\":\"low\",\"idempotent\":true,\"confirmation\":\"never\"}";

    private volatile EventListener listener;
    /** What the relay manifest requests (relay_apk/AndroidManifest.xml), all held by default. */
    public static final String[] REQUESTED_PERMISSIONS = {
        "android.permission.QUERY_ALL_PACKAGES", "android.permission.FOREGROUND_SERVICE",
        "android.permission.FOREGROUND_SERVICE_DATA_SYNC", "android.permission.POST_NOTIFICATIONS",
        "android.permission.SYSTEM_ALERT_WINDOW", "com.clawseed.permission.ACCESS_TOOLS",
    };
    /** What the hello reports as held: the requested ones less normal ones not granted. */
    private volatile String[] heldPermissions;

    /**
     * Which permissions the relay holds (HostMain --held-permissions): the hello reports them
     * and the provider rules enforce them, so the two never disagree.
     */
    public void setHeldPermissions(String[] held) {
        heldPermissions = held.clone();
        config.relayGranted = new HashSet<String>(Arrays.asList(held));
    }

    private static String[] heldFrom(Set<String> granted) {
        java.util.List<String> held = new java.util.ArrayList<String>();
        for (String p : REQUESTED_PERMISSIONS) {
            if (granted.contains(p) || !SHIPPED_RELAY_GRANTS.contains(p)) {
                held.add(p);
            }
        }
        return held.toArray(new String[0]);
    }

    private static byte[] largeFile() {
        byte[] b = new byte[300000];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) ('a' + (i % 26));
        }
        return b;
    }

    private static byte[] exportFile() {
        StringBuilder json = new StringBuilder("{\"symbol\":\"FAKE\",\"rows\":[");
        for (int day = 0; day < 6000; day++) {
            json.append(day == 0 ? "" : ",").append("{\"day\":").append(day)
                    .append(",\"close\":").append(100 + day % 97).append(".25}");
        }
        return Utf8.encode(json.append("]}").toString());
    }

    /** The native object behind a fake PendingIntent handle. */
    static final class FakePendingIntent {
        final String target;

        FakePendingIntent(String target) {
            this.target = target;
        }
    }

    @Override
    public Identity identity() {
        TypedBundle device = new TypedBundle().put("serial", "host-jvm").put("manufacturer", "CETP")
                .put("model", "Host JVM relay").put("sdk_int", config.api).put("release", release(config.api))
                .put("abi", System.getProperty("os.arch"));
        return new Identity(RELAY_PACKAGE, RELAY_UID,
                new String[] {Digests.sha256Hex(Utf8.encode("host-relay-cert"))}, 1, "host", device,
                REQUESTED_PERMISSIONS.clone(), heldPermissions.clone());
    }

    private static String release(int api) {
        switch (api) {
            case 26: return "8.0";
            case 28: return "9";
            case 29: return "10";
            case 30: return "11";
            case 31: return "12";
            case 33: return "13";
            case 35: return "15";
            default: return api == 34 ? "14" : "API " + api;
        }
    }

    @Override
    public TypedBundle[] discover(String pkg) {
        List<TypedBundle> out = new ArrayList<TypedBundle>();
        if (pkg == null || PROVIDER_PACKAGE.equals(pkg)) {
            out.add(providerRecord());
        }
        if (pkg == null || EXTENSION_PACKAGE.equals(pkg)) {
            out.add(extensionRecord());
        }
        return out.toArray(new TypedBundle[0]);
    }

    private static TypedBundle base(String pkg, String label, int uid) {
        return new TypedBundle().put("package", pkg).put("label", label).put("uid", uid)
                .put("version_code", 7L).put("version_name", "1.7")
                .put("cert_sha256", new String[] {Digests.sha256Hex(Utf8.encode(pkg))})
                .put("shared_user_id", null).put("launch_activity", pkg + ".MainActivity")
                .put("app_meta_data", new TypedBundle())
                .put("receivers", new TypedBundle[0]).put("activities", new TypedBundle[0])
                .put("permissions", new TypedBundle[0]);
    }

    private TypedBundle providerRecord() {
        TypedBundle meta = new TypedBundle().put("com.clawseed.tools.authority", AUTHORITY)
                .put("com.clawseed.tools.version", 1).put("com.clawseed.tools.versions", "1,2");
        TypedBundle service = new TypedBundle().put("name", PROVIDER_PACKAGE + ".cetp.ToolProviderService")
                .put("exported", true).put("enabled", true).put("permission", null)
                .put("actions", new String[] {"com.clawseed.action.TOOL_PROVIDER"})
                .put("meta_data", meta);
        TypedBundle provider = new TypedBundle().put("name", PROVIDER_PACKAGE + ".cetp.ToolProvider")
                .put("authority", AUTHORITY).put("exported", config.providerExported)
                .put("enabled", true).put("permission", config.providerPermission)
                .put("read_permission", config.providerReadPermission)
                .put("write_permission", config.providerWritePermission)
                .put("init_order", 100);
        return base(PROVIDER_PACKAGE, "Fake Provider", PROVIDER_UID)
                .put("services", new TypedBundle[] {service})
                .put("providers", new TypedBundle[] {provider})
                .put("permissions", new TypedBundle[] {new TypedBundle().put("name", ACCESS_TOOLS)
                        .put("protection_level", 0)});
    }

    private static TypedBundle extensionRecord() {
        TypedBundle meta = new TypedBundle().put("org.ethereumphone.andyclaw.EXTENSION", "true")
                .put("org.ethereumphone.andyclaw.EXTENSION_ID", "fake_extension")
                .put("org.ethereumphone.andyclaw.EXTENSION_NAME", "Fake Extension")
                .put("org.ethereumphone.andyclaw.EXTENSION_MANIFEST", MANIFEST_RESOURCE);
        TypedBundle service = new TypedBundle().put("name", EXTENSION_PACKAGE + ".ExtensionService")
                .put("exported", true).put("enabled", true).put("permission", null)
                .put("actions", new String[] {"org.ethereumphone.andyclaw.EXTENSION_SERVICE"})
                .put("meta_data", new TypedBundle());
        return base(EXTENSION_PACKAGE, "Fake Extension", 10102).put("app_meta_data", meta)
                .put("services", new TypedBundle[] {service})
                .put("providers", new TypedBundle[0]);
    }

    private static TypedBundle success(String json) {
        return new TypedBundle().put("status", "success").put("data", json);
    }

    @Override
    public TypedBundle call(String authority, String method, String arg, TypedBundle extras,
                            int timeoutMs, HandleTable handles) throws Exception {
        if (!AUTHORITY.equals(authority)) {
            throw new RelayException(RelayException.NOT_FOUND, "unknown authority " + authority);
        }
        AndroidRules.checkProviderAccess(RELAY_PACKAGE, RELAY_UID, config.relayGranted,
                PROVIDER_PACKAGE + ".cetp.ToolProvider", PROVIDER_UID, config.providerExported,
                config.providerPermission, config.providerReadPermission,
                config.providerWritePermission);
        started(PROVIDER_PACKAGE);
        if ("negotiate".equals(method)) {
            return success("{\"selected_version\":2,\"provider_id\":\"" + PROVIDER_PACKAGE
                    + "\",\"provider_name\":\"Fake Provider\",\"session_token\":\"fake-session\","
                    + "\"capabilities\":[\"large_results\"],\"limits\":{\"max_request_bytes\":65536,"
                    + "\"max_inline_result_bytes\":262144,\"max_concurrent_requests\":4,"
                    + "\"idempotency_window_seconds\":86400}}")
                    .put("protocol_version", 2);
        }
        if ("list_tools".equals(method)) {
            return echo(extras, success("{\"revision\":\"tools-1\",\"tools\":[{\"name\":"
                    + "\"get_quote\",\"description\":\"Current price of a symbol\","
                    + "\"input_schema\":{\"type\":\"object\"}," + READ_ANNOTATIONS + "},"
                    + "{\"name\":\"export_history\",\"description\":\"Price history as a "
                    + "JSON file\",\"input_schema\":{\"type\":\"object\"},"
                    + READ_ANNOTATIONS + "}]}"));
        }
        if ("execute_tool".equals(method)) {
            return echo(extras, executeTool(extras, handles));
        }
        if ("echo".equals(method)) {
            TypedBundle reply = new TypedBundle().put("arg", arg).put("extras", extras)
                    .put("int", 7).put("long", 7L).put("double", 0.5).put("bool", true)
                    .put("ints", new int[] {1, -2}).put("strings", new String[] {"x", null})
                    .put("bytes", new byte[] {0, 1, (byte) 0xff})
                    .put("unsupported", new Handles.Unsupported("android.graphics.Bitmap"));
            return reply;
        }
        if ("large_result".equals(method)) {
            String id = handles.register("fd", LARGE_FILE);
            return success("{\"kind\":\"file\",\"media_type\":\"application/json\",\"size_bytes\":"
                    + LARGE_FILE.length + ",\"sha256\":\"" + Digests.sha256Hex(LARGE_FILE) + "\"}")
                    .put("result_fd", new Handles.FileRef(id, LARGE_FILE.length));
        }
        if ("needs_approval".equals(method)) {
            String id = handles.register("pi", new FakePendingIntent(PROVIDER_PACKAGE + ".Approve"));
            return new TypedBundle().put("status", "error").put("error_code", "USER_ACTION_REQUIRED")
                    .put("resolution", new Handles.PendingIntentRef(id, PROVIDER_PACKAGE,
                            Handles.PendingIntentRef.IMMUTABLE_KNOWN | Handles.PendingIntentRef.IMMUTABLE
                                    | Handles.PendingIntentRef.KIND_KNOWN
                                    | Handles.PendingIntentRef.ACTIVITY));
        }
        if ("null_reply".equals(method)) {
            return null;
        }
        if ("forbidden".equals(method)) {
            throw new SecurityException("Permission Denial: fake provider requires a permission");
        }
        if ("slow".equals(method)) {
            Thread.sleep(timeoutMs + 10000L);
            return success("{}");
        }
        if ("stuck".equals(method)) {
            // a binder call ignores interrupts: block for `arg` ms whatever happens
            long end = System.currentTimeMillis() + Long.parseLong(arg == null ? "3000" : arg);
            for (long left; (left = end - System.currentTimeMillis()) > 0; ) {
                try {
                    Thread.sleep(left);
                } catch (InterruptedException ignored) {
                    // like a transaction in flight: keep waiting
                }
            }
            return success("{}");
        }
        if ("emit_package_event".equals(method)) {
            EventListener l = listener;
            if (l != null) {
                l.onEvent(new TypedBundle().put("event", "package_changed").put("change", "replaced")
                        .put("package", PROVIDER_PACKAGE));
            }
            return success("{}");
        }
        return new TypedBundle().put("status", "error").put("error_code", "UNKNOWN_METHOD")
                .put("error_message", "no method " + method).put("retryable", false);
    }

    /** The v2 envelope echo (CETP v2 §4.2, §5): protocol_version 2 and the request_id. */
    private static TypedBundle echo(TypedBundle extras, TypedBundle reply) {
        Object requestId = extras == null ? null : extras.get("request_id");
        return reply.put("protocol_version", 2)
                .put("request_id", requestId instanceof String ? requestId : null);
    }

    /** execute_tool: get_quote answers inline (echoing the args), export_history a file. */
    private static TypedBundle executeTool(TypedBundle extras, HandleTable handles)
            throws RelayException {
        Object tool = extras == null ? null : extras.get("tool_name");
        Object args = extras == null ? null : extras.get("args");
        if ("get_quote".equals(tool)) {
            String echoed = args instanceof String ? (String) args : "null";
            return success("{\"kind\":\"inline\",\"value\":{\"price\":101.25,"
                    + "\"currency\":\"EUR\",\"args\":" + echoed + "}}");
        }
        if ("export_history".equals(tool)) {
            String id = handles.register("fd", EXPORT_FILE);
            return success("{\"kind\":\"file\",\"media_type\":\"application/json\","
                    + "\"size_bytes\":" + EXPORT_FILE.length + ",\"sha256\":\""
                    + Digests.sha256Hex(EXPORT_FILE) + "\"}")
                    .put("result_fd", new Handles.FileRef(id, EXPORT_FILE.length));
        }
        return new TypedBundle().put("status", "error").put("error_code", "TOOL_NOT_FOUND")
                .put("error_message", "no tool " + tool).put("retryable", false);
    }

    @Override
    public FileSource openFile(Object nativeHandle) throws RelayException {
        if (!(nativeHandle instanceof byte[])) {
            throw new RelayException(RelayException.BAD_ARGS, "that handle is not a file");
        }
        byte[] data = (byte[]) nativeHandle;
        return new FileSource(new ByteArrayInputStream(data), data.length);
    }

    @Override
    public ActivityResult launchPendingIntent(Object nativeHandle, int timeoutMs)
            throws RelayException {
        if (!(nativeHandle instanceof FakePendingIntent)) {
            throw new RelayException(RelayException.BAD_ARGS, "that handle is not a PendingIntent");
        }
        return new ActivityResult(-1, new TypedBundle().put("approved", true)
                .put("target", ((FakePendingIntent) nativeHandle).target));
    }

    @Override
    public TransactResult bindTransact(String pkg, String action, String descriptor, int code,
                                       String[] strings, int timeoutMs) throws RelayException {
        if (!EXTENSION_PACKAGE.equals(pkg)) {
            throw new RelayException(RelayException.NOT_FOUND, "no service for " + action + " in " + pkg);
        }
        started(pkg);
        if (NULL_BIND_ACTION.equals(action)) {
            RelayException e = AndroidRules.nullBinding(config.api, timeoutMs);
            if (config.api < org.cetp.inspector.relay.core.Bindings.NULL_BINDING_CALLBACK_API) {
                try {
                    // a little under the request's own deadline, as the relay's bind wait is
                    Thread.sleep(timeoutMs * 9L / 10L);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
            }
            throw e;
        }
        if (!EXTENSION_DESCRIPTOR.equals(descriptor)) {
            return new TransactResult(new TypedBundle().put("class", "java.lang.SecurityException")
                    .put("message", "Binder invocation to an incorrect interface"), null);
        }
        if (code == 1) {
            return new TransactResult(null, EXTENSION_MANIFEST);
        }
        if (code == 2 && strings.length == 2) {
            return new TransactResult(null, "{\"function\":\"" + strings[0] + "\",\"ok\":true}");
        }
        return new TransactResult(new TypedBundle().put("class", "java.lang.IllegalArgumentException")
                .put("message", "unknown transaction " + code), null);
    }

    @Override
    public BroadcastResult broadcast(String pkg, String action, TypedBundle extras,
                                     String replyAction, boolean includeStopped, int timeoutMs) {
        // rule stopped_package_broadcast: FLAG_INCLUDE_STOPPED_PACKAGES reaches stopped apps
        if (!EXTENSION_PACKAGE.equals(pkg)
                || !AndroidRules.broadcastDelivered(stopped.contains(pkg), includeStopped)) {
            return new BroadcastResult(null, true);
        }
        started(pkg);
        return new BroadcastResult(new TypedBundle().put("result", "{\"ok\":true}"), false);
    }

    @Override
    public ActivityStart startActivity(String pkg, String action, TypedBundle extras) {
        boolean ok = EXTENSION_PACKAGE.equals(pkg);
        return new ActivityStart(ok, ok ? pkg + "/.ExtensionActivity" : null);
    }

    @Override
    public ResourceData readResource(String pkg, int resourceId, int maxBytes)
            throws RelayException {
        if (!EXTENSION_PACKAGE.equals(pkg) || resourceId != MANIFEST_RESOURCE) {
            throw new RelayException(RelayException.NOT_FOUND, "no resource 0x"
                    + Integer.toHexString(resourceId) + " in " + pkg);
        }
        return new ResourceData(Utf8.encode(EXTENSION_MANIFEST), "raw/extension_manifest");
    }

    @Override
    public WakeResult wakeProvider(String authority, String pkg, String mode, int timeoutMs) {
        boolean ok = AUTHORITY.equals(authority);
        return new WakeResult(ok, ok ? "provider process is running" : "unknown authority");
    }

    @Override
    public void release(Object nativeHandle) {
        // nothing native to free on the host
    }

    @Override
    public void setEventListener(EventListener listener) {
        this.listener = listener;
    }
}
