package org.cetp.inspector.relay.core;

import java.util.Arrays;

/**
 * The Java types a typed value may have: null, String, Integer, Long, Boolean, Double,
 * int[], String[], byte[], TypedBundle, TypedBundle[] (null elements allowed),
 * Handles.PendingIntentRef, Handles.FileRef, Handles.Unsupported.
 */
public final class Values {
    private Values() {
    }

    public static void check(Object v) {
        if (v == null || v instanceof String || v instanceof Integer || v instanceof Long
                || v instanceof Boolean || v instanceof Double || v instanceof int[]
                || v instanceof String[] || v instanceof byte[] || v instanceof TypedBundle
                || v instanceof TypedBundle[] || v instanceof Handles.PendingIntentRef
                || v instanceof Handles.FileRef || v instanceof Handles.Unsupported) {
            return;
        }
        throw new IllegalArgumentException(v.getClass().getName() + " is not a typed value");
    }

    public static boolean equal(Object a, Object b) {
        if (a == null || b == null) {
            return a == b;
        }
        if (a instanceof int[] && b instanceof int[]) {
            return Arrays.equals((int[]) a, (int[]) b);
        }
        if (a instanceof byte[] && b instanceof byte[]) {
            return Arrays.equals((byte[]) a, (byte[]) b);
        }
        if (a instanceof String[] && b instanceof String[]) {
            return Arrays.equals((String[]) a, (String[]) b);
        }
        if (a instanceof TypedBundle[] && b instanceof TypedBundle[]) {
            return Arrays.equals((TypedBundle[]) a, (TypedBundle[]) b);
        }
        if (a instanceof Double && b instanceof Double) {
            // bit equality: the wire form is the exact binary64
            return Double.doubleToRawLongBits((Double) a) == Double.doubleToRawLongBits((Double) b);
        }
        return a.getClass() == b.getClass() && a.equals(b);
    }

    public static String describe(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof String) {
            return "\"" + clip((String) v, 80) + "\"";
        }
        if (v instanceof Long) {
            return v + "L";
        }
        if (v instanceof int[]) {
            return Arrays.toString((int[]) v);
        }
        if (v instanceof String[]) {
            return Arrays.toString((String[]) v);
        }
        if (v instanceof byte[]) {
            return "byte[" + ((byte[]) v).length + "]";
        }
        if (v instanceof TypedBundle[]) {
            return Arrays.toString((TypedBundle[]) v);
        }
        return String.valueOf(v);
    }

    /**
     * At most {@code max} chars of peer-supplied text for a message, never splitting a
     * surrogate pair (a lone surrogate could not be encoded back to UTF-8).
     */
    public static String clip(String s, int max) {
        if (s.length() <= max) {
            return s;
        }
        int end = Character.isHighSurrogate(s.charAt(max - 1)) ? max - 1 : max;
        return s.substring(0, end) + "…";
    }
}
