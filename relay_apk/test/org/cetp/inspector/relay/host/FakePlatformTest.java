package org.cetp.inspector.relay.host;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;

import org.cetp.inspector.relay.core.Digests;
import org.cetp.inspector.relay.core.HandleTable;
import org.cetp.inspector.relay.core.Handles;
import org.cetp.inspector.relay.core.Platform;
import org.cetp.inspector.relay.core.TypedBundle;
import org.junit.Test;

/**
 * The test platform's CETP v2 provider must answer as a conforming provider does, or the
 * Python consumer engine driving it through the fake phone flags its replies instead of
 * exercising the relay path.
 */
public class FakePlatformTest {
    private final FakePlatform platform = new FakePlatform();
    private final HandleTable handles = new HandleTable(platform);

    private TypedBundle call(String method, TypedBundle extras) throws Exception {
        return platform.call(FakePlatform.AUTHORITY, method, null, extras, 5000, handles);
    }

    private static TypedBundle v2(String requestId) {
        return new TypedBundle().put("protocol_version", 2).put("session_token", "fake-session")
                .put("request_id", requestId).put("deadline_at_ms", 1L);
    }

    @Test
    public void v2MethodsEchoProtocolVersionAndRequestId() throws Exception {
        TypedBundle tools = call("list_tools", v2("r-1"));
        assertEquals("success", tools.get("status"));
        assertEquals(2, tools.get("protocol_version"));
        assertEquals("r-1", tools.get("request_id"));
        assertTrue(((String) tools.get("data")).contains("\"annotations\":{\"effect\":\"read\""));
    }

    @Test
    public void getQuoteAnswersInlineWithTheArgs() throws Exception {
        TypedBundle reply = call("execute_tool", v2("r-2").put("tool_name", "get_quote")
                .put("args", "{\"symbol\":\"ACME\"}"));
        assertEquals("r-2", reply.get("request_id"));
        assertEquals("{\"kind\":\"inline\",\"value\":{\"price\":101.25,\"currency\":\"EUR\","
                + "\"args\":{\"symbol\":\"ACME\"}}}", reply.get("data"));
    }

    @Test
    public void exportHistoryIsAFileResultWhoseHandleReadsTheDeclaredBytes() throws Exception {
        TypedBundle reply = call("execute_tool", v2("r-3").put("tool_name", "export_history")
                .put("args", "{}"));
        String data = (String) reply.get("data");
        assertTrue(data, data.contains("\"sha256\":\"" + Digests.sha256Hex(FakePlatform.EXPORT_FILE)));
        assertTrue(data, data.contains("\"size_bytes\":" + FakePlatform.EXPORT_FILE.length + ","));
        Handles.FileRef fd = (Handles.FileRef) reply.get("result_fd");
        assertEquals(FakePlatform.EXPORT_FILE.length, fd.size);
        Platform.FileSource source = platform.openFile(handles.get(fd.id));
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        InputStream in = source.stream;
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) > 0; ) {
            got.write(buf, 0, n);
        }
        assertArrayEquals(FakePlatform.EXPORT_FILE, got.toByteArray());
    }

    @Test
    public void errorsSayWhetherTheyAreRetryable() throws Exception {
        TypedBundle unknownTool = call("execute_tool", v2("r-4").put("tool_name", "nope"));
        assertEquals("TOOL_NOT_FOUND", unknownTool.get("error_code"));
        assertEquals(false, unknownTool.get("retryable"));
        assertEquals("r-4", unknownTool.get("request_id"));
        TypedBundle unknownMethod = call("no_such_method", null);
        assertEquals("UNKNOWN_METHOD", unknownMethod.get("error_code"));
        assertEquals(false, unknownMethod.get("retryable"));
    }
}
