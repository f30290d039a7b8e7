package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class DigestsTest {
    @Test
    public void sha256MatchesKnownAnswers() {
        assertEquals("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                Digests.sha256Hex(new byte[0]));
        assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                Digests.sha256Hex(Utf8.encode("abc")));
    }

    @Test
    public void tokenComparison() {
        byte[] token = Utf8.encode("0123456789abcdef");
        assertTrue(Digests.tokenMatches("0123456789abcdef", token));
        assertFalse(Digests.tokenMatches("0123456789abcdeF", token));
        assertFalse(Digests.tokenMatches("0123456789abcde", token));
        assertFalse(Digests.tokenMatches(null, token));
        assertFalse("an empty session token never matches", Digests.tokenMatches("", new byte[0]));
    }
}
