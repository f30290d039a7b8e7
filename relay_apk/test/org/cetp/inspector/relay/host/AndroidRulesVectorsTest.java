package org.cetp.inspector.relay.host;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.cetp.inspector.relay.core.HandleTable;
import org.cetp.inspector.relay.core.MiniJson;
import org.cetp.inspector.relay.core.Platform;
import org.cetp.inspector.relay.core.RelayException;
import org.cetp.inspector.relay.core.TypedBundle;
import org.junit.Test;

/**
 * The shared Android rule vectors (tests/vectors/android_rules/cases.json) against the fake
 * platform: the kinds it models (provider_access, broadcast, null_binding) must come out as
 * the Python rules layer and the virtual device say. The folder comes from -Dvectors.dir.
 */
public class AndroidRulesVectorsTest {
    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> cases(String kind) throws Exception {
        String dir = System.getProperty("vectors.dir");
        assertTrue("set -Dvectors.dir to tests/vectors", dir != null);
        File f = new File(new File(dir, "android_rules"), "cases.json");
        Map<String, Object> doc = (Map<String, Object>) MiniJson.parse(
                new String(Files.readAllBytes(f.toPath()), "UTF-8"));
        List<Map<String, Object>> out = new ArrayList<Map<String, Object>>();
        for (Object c : (List<Object>) doc.get("cases")) {
            Map<String, Object> m = (Map<String, Object>) c;
            if (kind.equals(m.get("kind"))) {
                out.add(m);
            }
        }
        assertTrue("no " + kind + " vectors", !out.isEmpty());
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Map<String, Object> m, String key) {
        return (Map<String, Object>) m.get(key);
    }

    @SuppressWarnings("unchecked")
    private static Set<String> strings(Object list) {
        Set<String> out = new HashSet<String>();
        for (Object o : (List<Object>) list) {
            out.add((String) o);
        }
        return out;
    }

    private static int api(Map<String, Object> c) {
        return ((Long) c.get("api")).intValue();
    }

    /** Checks a blocked outcome against expect (error code, rule, message fragments). */
    private static void assertBlocked(Map<String, Object> c, String code, String message) {
        Map<String, Object> expect = map(c, "expect");
        String id = (String) c.get("id");
        assertEquals(id, Boolean.FALSE, expect.get("allowed"));
        if (expect.containsKey("error")) {
            assertEquals(id, expect.get("error"), code);
        }
        if (expect.containsKey("message_contains")) {
            for (String s : strings(expect.get("message_contains"))) {
                assertTrue(id + ": " + message + " lacks " + s, message.contains(s));
            }
        }
    }

    @Test
    public void providerAccessVectors() throws Exception {
        int run = 0;
        for (Map<String, Object> c : cases("provider_access")) {
            Map<String, Object> caller = map(c, "caller");
            Map<String, Object> provider = map(c, "provider");
            boolean allowed = (Boolean) map(c, "expect").get("allowed");
            if (((Long) caller.get("uid")).equals(provider.get("uid"))) {
                // the relay is never the provider's UID on the fake device: check the rule
                AndroidRules.checkProviderAccess("p", 1, strings(caller.get("granted")), "P", 1,
                        (Boolean) provider.get("exported"), (String) provider.get("permission"),
                        (String) provider.get("read_permission"),
                        (String) provider.get("write_permission"));
                assertTrue((String) c.get("id"), allowed);
                continue;
            }
            FakePlatform.Config config = new FakePlatform.Config();
            config.api = api(c);
            config.relayGranted = strings(caller.get("granted"));
            config.providerExported = (Boolean) provider.get("exported");
            config.providerPermission = (String) provider.get("permission");
            config.providerReadPermission = (String) provider.get("read_permission");
            config.providerWritePermission = (String) provider.get("write_permission");
            FakePlatform platform = new FakePlatform(config);
            try {
                platform.call(FakePlatform.AUTHORITY, "list_tools", null, null, 1000,
                        new HandleTable(platform));
                assertTrue((String) c.get("id") + " was allowed", allowed);
            } catch (SecurityException e) {
                assertBlocked(c, "SECURITY", e.getMessage());
            }
            run++;
        }
        assertTrue("provider vectors run through FakePlatform: " + run, run >= 10);
    }

    @Test
    public void broadcastVectors() throws Exception {
        for (Map<String, Object> c : cases("broadcast")) {
            FakePlatform.Config config = new FakePlatform.Config();
            config.api = api(c);
            FakePlatform platform = new FakePlatform(config);
            if ((Boolean) c.get("target_stopped")) {
                platform.forceStop(FakePlatform.EXTENSION_PACKAGE);
            }
            Platform.BroadcastResult r = platform.broadcast(FakePlatform.EXTENSION_PACKAGE,
                    "org.ethereumphone.andyclaw.EXTENSION_BROADCAST", new TypedBundle(),
                    "reply", (Boolean) c.get("include_stopped"), 300);
            boolean allowed = (Boolean) map(c, "expect").get("allowed");
            assertEquals((String) c.get("id"), !allowed, r.timedOut);
        }
    }

    @Test
    public void nullBindingVectors() throws Exception {
        for (Map<String, Object> c : cases("null_binding")) {
            FakePlatform.Config config = new FakePlatform.Config();
            config.api = api(c);
            FakePlatform platform = new FakePlatform(config);
            int timeoutMs = ((Long) c.get("timeout_ms")).intValue();
            long started = System.nanoTime();
            try {
                platform.bindTransact(FakePlatform.EXTENSION_PACKAGE, FakePlatform.NULL_BIND_ACTION,
                        FakePlatform.EXTENSION_DESCRIPTOR, 1, new String[0], timeoutMs);
                fail((String) c.get("id") + ": a null binding must not connect");
            } catch (RelayException e) {
                assertBlocked(c, e.code, e.getMessage());
                long waitedMs = (System.nanoTime() - started) / 1_000_000L;
                // no onNullBinding before API 28: the bind waits out its timeout
                assertEquals((String) c.get("id"), api(c) < 28,
                        waitedMs >= timeoutMs * 9L / 10L);
            }
        }
    }

    @Test
    public void theShippedRelayGrantsReachTheProtectedProviderAndAForceStopStopsBroadcasts()
            throws Exception {
        FakePlatform platform = new FakePlatform();
        TypedBundle reply = platform.call(FakePlatform.AUTHORITY, "list_tools", null, null, 1000,
                new HandleTable(platform));
        assertEquals("success", reply.get("status"));
        platform.forceStop(FakePlatform.EXTENSION_PACKAGE);
        assertTrue(platform.broadcast(FakePlatform.EXTENSION_PACKAGE, "a", new TypedBundle(), "r",
                false, 100).timedOut);
    }
}
