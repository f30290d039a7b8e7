package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

/** Activity starts never claim a launch they cannot know about (issue 10, findings 2, 3, 8). */
public class ActivityStartsTest {
    @Test
    public void backgroundStartsNeedTheRelayInFrontFromAndroid10() {
        assertFalse(ActivityStarts.needsRelayInFront(26, false));
        assertFalse(ActivityStarts.needsRelayInFront(28, false));
        assertTrue(ActivityStarts.needsRelayInFront(29, false));
        assertTrue(ActivityStarts.needsRelayInFront(35, false));
        assertFalse(ActivityStarts.needsRelayInFront(35, true));
    }

    @Test
    public void needsForegroundIsTypedAndNamesTheRealActivityClass() {
        RelayException e = ActivityStarts.needsForeground("start_activity", "com.x/.A");
        assertEquals(RelayException.NEEDS_FOREGROUND, e.code);
        assertTrue(e.getMessage(), e.getMessage().contains(
                "adb shell am start -n org.cetp.inspector.relay/.app.RelayActivity"));
        assertEquals("com.x/.A", e.details.get("component"));
        assertEquals(ActivityStarts.RELAY_ACTIVITY, e.details.get("relay_activity"));
    }

    @Test
    public void whatStartActivityThrowsBecomesATypedError() {
        assertEquals(RelayException.SECURITY, ActivityStarts.startFailed(
                new SecurityException("Permission Denial: not exported"), "com.x/.A").code);
        assertEquals(RelayException.NOT_FOUND, ActivityStarts.startFailed(
                new android.content.ActivityNotFoundException("No Activity found"), "com.x/.A").code);
        assertEquals(RelayException.INTERNAL, ActivityStarts.startFailed(
                new IllegalStateException("odd"), "com.x/.A").code);
    }
}
