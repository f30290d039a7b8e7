package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import org.junit.Test;

/** PendingIntent outcomes are reported as what they are (issue 10, PendingIntent findings). */
public class PendingIntentsTest {
    @Test
    public void cancelledBeforeTheRelayPausedIsTheNewTaskCaseNotAUserNo() {
        assertEquals(PendingIntents.CANCELLED_NEW_TASK, PendingIntents.classify(0, false));
        assertEquals(PendingIntents.USER_CANCELLED, PendingIntents.classify(0, true));
        assertEquals(PendingIntents.RESULT, PendingIntents.classify(-1, true));
        assertEquals(PendingIntents.RESULT, PendingIntents.classify(1, false)); // RESULT_FIRST_USER
        assertTrue(PendingIntents.describe(PendingIntents.CANCELLED_NEW_TASK, 12)
                .contains("new task"));
    }

    private static TypedBundle launch(String handle) {
        return new TypedBundle().put("handle", handle).put("timeout_ms", 2000);
    }

    @Test
    public void theReplyCarriesTheOutcomeAndItsExplanation() throws Exception {
        StubPlatform p = new StubPlatform();
        p.launchResult = new Platform.ActivityResult(0, null, PendingIntents.CANCELLED_NEW_TASK, 40);
        StubPlatform.Context ctx = new StubPlatform.Context(p);
        String id = ctx.handles.register("pi", new Object());
        TypedBundle r = new Dispatcher(p).dispatch("launch_pending_intent", launch(id), ctx);
        assertEquals(0, r.get("result_code"));
        assertEquals(PendingIntents.CANCELLED_NEW_TASK, r.get("outcome"));
        assertEquals(40L, r.get("elapsed_ms"));
        assertTrue(((String) r.get("detail")).contains("RESULT_CANCELED"));
    }

    @Test
    public void aPlatformThatCannotTellReportsNoOutcome() throws Exception {
        StubPlatform p = new StubPlatform();
        p.launchResult = new Platform.ActivityResult(-1, null);
        StubPlatform.Context ctx = new StubPlatform.Context(p);
        String id = ctx.handles.register("pi", new Object());
        TypedBundle r = new Dispatcher(p).dispatch("launch_pending_intent", launch(id), ctx);
        assertNull(r.get("outcome"));
        assertTrue(!r.containsKey("outcome"));
    }

    @Test
    public void aCancelledPendingIntentDropsItsHandle() throws Exception {
        StubPlatform p = new StubPlatform();
        p.launchFailure = PendingIntents.cancelled("CanceledException on send");
        StubPlatform.Context ctx = new StubPlatform.Context(p);
        String id = ctx.handles.register("pi", new Object());
        try {
            new Dispatcher(p).dispatch("launch_pending_intent", launch(id), ctx);
            fail("expected NOT_FOUND");
        } catch (RelayException e) {
            assertEquals(RelayException.NOT_FOUND, e.code);
            assertTrue(e.getMessage(), e.getMessage().contains("fresh resolution"));
        }
        assertEquals(0, ctx.handles.size());
    }

    @Test
    public void otherFailuresKeepTheHandle() throws Exception {
        StubPlatform p = new StubPlatform();
        p.launchFailure = new RelayException(RelayException.TIMEOUT, "no result");
        StubPlatform.Context ctx = new StubPlatform.Context(p);
        String id = ctx.handles.register("pi", new Object());
        try {
            new Dispatcher(p).dispatch("launch_pending_intent", launch(id), ctx);
            fail("expected TIMEOUT");
        } catch (RelayException e) {
            assertEquals(RelayException.TIMEOUT, e.code);
        }
        assertEquals(1, ctx.handles.size());
    }
}
