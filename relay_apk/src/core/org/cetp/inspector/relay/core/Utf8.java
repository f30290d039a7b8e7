package org.cetp.inspector.relay.core;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.MalformedInputException;

/**
 * Strict UTF-8 (docs/relay-protocol.md §2). Decoding validates the bytes by hand before
 * converting them: overlong forms (including Java's "modified UTF-8" NUL, C0 80), encoded
 * surrogates, code points above U+10FFFF and truncated sequences are rejected. The platform
 * decoder is not trusted to do this alike on every JVM and Android version.
 */
public final class Utf8 {
    public static final Charset UTF8 = Charset.forName("UTF-8");

    private Utf8() {
    }

    public static byte[] encode(String s) {
        CharsetEncoder enc = UTF8.newEncoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try {
            ByteBuffer bb = enc.encode(CharBuffer.wrap(s));
            byte[] out = new byte[bb.remaining()];
            bb.get(out);
            return out;
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("string is not valid Unicode (lone surrogate)");
        }
    }

    public static String decode(byte[] b, int off, int len) throws CharacterCodingException {
        int bad = firstInvalid(b, off, len);
        if (bad >= 0) {
            throw new MalformedInputException(bad - off);
        }
        return new String(b, off, len, UTF8);
    }

    /** The offset of the first byte that starts an invalid sequence, or -1 when all is valid. */
    public static int firstInvalid(byte[] b, int off, int len) {
        int i = off;
        int end = off + len;
        while (i < end) {
            int c = b[i] & 0xff;
            if (c < 0x80) {
                i++;
                continue;
            }
            int n;
            int lo = 0x80;
            int hi = 0xBF;
            if (c >= 0xC2 && c <= 0xDF) {
                n = 1;
            } else if (c >= 0xE0 && c <= 0xEF) {
                n = 2;
                if (c == 0xE0) {
                    lo = 0xA0; // below: overlong
                } else if (c == 0xED) {
                    hi = 0x9F; // above: U+D800..U+DFFF, surrogates
                }
            } else if (c >= 0xF0 && c <= 0xF4) {
                n = 3;
                if (c == 0xF0) {
                    lo = 0x90; // below: overlong
                } else if (c == 0xF4) {
                    hi = 0x8F; // above: beyond U+10FFFF
                }
            } else {
                return i; // stray continuation byte, C0/C1 (overlong) or F5..FF
            }
            if (i + n >= end) {
                return i; // truncated sequence
            }
            int second = b[i + 1] & 0xff;
            if (second < lo || second > hi) {
                return i;
            }
            for (int k = 2; k <= n; k++) {
                int cont = b[i + k] & 0xff;
                if (cont < 0x80 || cont > 0xBF) {
                    return i;
                }
            }
            i += n + 1;
        }
        return -1;
    }
}
