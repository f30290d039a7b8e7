package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

/** The broadcast bridge's rules (issue 10, finding 6 and the exported reply receiver). */
public class BroadcastsTest {
    @Test
    public void replyActionsAreUnpredictablePerCall() {
        String base = "com.x.andyclaw.EXTENSION_RESPONSE";
        String a = Broadcasts.replyAction(base);
        String b = Broadcasts.replyAction(base);
        assertNotEquals(a, b);
        assertTrue(a.startsWith(base + ".r"));
        assertEquals(base.length() + 2 + 32, a.length());
    }

    @Test
    public void includeStoppedIsTheFrameworkFlagAndOffByDefault() {
        assertEquals(0, Broadcasts.intentFlags(false));
        assertEquals(0x20, Broadcasts.intentFlags(true));
    }

    @Test
    public void stoppedIsApplicationInfoFlagStopped() {
        assertTrue(Broadcasts.isStopped(0x200000 | 0x1));
        assertFalse(Broadcasts.isStopped(0x1));
    }

    @Test
    public void aTimeoutExplainsItself() {
        String stopped = Broadcasts.explainTimeout(Boolean.TRUE, false, 500);
        assertTrue(stopped, stopped.contains("stopped state") && stopped.contains("include_stopped"));
        String running = Broadcasts.explainTimeout(Boolean.FALSE, false, 500);
        assertTrue(running, running.contains("not stopped") && running.contains("nothing answered"));
        assertTrue(Broadcasts.explainTimeout(null, false, 500).contains("unknown"));
    }
}
