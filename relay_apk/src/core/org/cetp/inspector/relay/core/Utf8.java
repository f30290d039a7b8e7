package org.cetp.inspector.relay.core;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;

/** Strict UTF-8: decoding rejects malformed input instead of substituting U+FFFD. */
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
        CharsetDecoder dec = UTF8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        return dec.decode(ByteBuffer.wrap(b, off, len)).toString();
    }
}
