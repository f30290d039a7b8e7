package org.cetp.inspector.relay.core;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256 helpers (streaming) and constant-time token comparison. */
public final class Digests {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private Digests() {
    }

    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    public static String sha256Hex(byte[] data) {
        return hex(sha256().digest(data));
    }

    public static String hex(byte[] b) {
        char[] out = new char[b.length * 2];
        for (int i = 0; i < b.length; i++) {
            out[2 * i] = HEX[(b[i] >> 4) & 0xf];
            out[2 * i + 1] = HEX[b[i] & 0xf];
        }
        return new String(out);
    }

    /**
     * Compares a presented token with the session token in time independent of where they
     * differ: both are hashed first so even the length does not leak through timing.
     */
    public static boolean tokenMatches(String presented, byte[] expectedUtf8) {
        if (presented == null || expectedUtf8 == null || expectedUtf8.length == 0) {
            return false;
        }
        byte[] a = sha256().digest(Utf8.encode(presented));
        byte[] b = sha256().digest(expectedUtf8);
        int diff = 0;
        for (int i = 0; i < a.length; i++) {
            diff |= a[i] ^ b[i];
        }
        return diff == 0;
    }
}
