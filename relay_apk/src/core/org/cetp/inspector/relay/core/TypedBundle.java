package org.cetp.inspector.relay.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A wire Bundle: string keys, typed values (see {@link Values} for the Java types allowed).
 * Plain Java so the codec and dispatcher run on the host JVM; the Android side maps
 * android.os.Bundle to and from it. Entries are kept unordered; the encoder sorts keys by
 * their UTF-8 bytes so encoding is deterministic (docs/relay-protocol.md §2).
 */
public final class TypedBundle {
    private final Map<String, Object> map = new HashMap<String, Object>();

    public TypedBundle put(String key, Object value) {
        if (key == null) {
            throw new IllegalArgumentException("Bundle key must not be null");
        }
        Values.check(value);
        map.put(key, value);
        return this;
    }

    public Object get(String key) {
        return map.get(key);
    }

    public boolean containsKey(String key) {
        return map.containsKey(key);
    }

    public Object remove(String key) {
        return map.remove(key);
    }

    public int size() {
        return map.size();
    }

    public Set<String> keySet() {
        return map.keySet();
    }

    /** Keys in wire order (ascending UTF-8 bytes). */
    public List<String> sortedKeys() {
        List<String> keys = new ArrayList<String>(map.keySet());
        Collections.sort(keys, UTF8_ORDER);
        return keys;
    }

    /** Orders strings by their UTF-8 encoding, which differs from String.compareTo for
     * characters above U+FFFF versus U+E000..U+FFFF. */
    public static final Comparator<String> UTF8_ORDER = new Comparator<String>() {
        @Override
        public int compare(String a, String b) {
            return compareUnsigned(Utf8.encode(a), Utf8.encode(b));
        }
    };

    /** Byte-wise unsigned comparison, shorter first on a common prefix (Java 8 has no
     * Arrays.compareUnsigned). */
    static int compareUnsigned(byte[] x, byte[] y) {
        int n = Math.min(x.length, y.length);
        for (int i = 0; i < n; i++) {
            int d = (x[i] & 0xff) - (y[i] & 0xff);
            if (d != 0) {
                return d;
            }
        }
        return x.length - y.length;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TypedBundle)) {
            return false;
        }
        TypedBundle other = (TypedBundle) o;
        if (!map.keySet().equals(other.map.keySet())) {
            return false;
        }
        for (Map.Entry<String, Object> e : map.entrySet()) {
            if (!Values.equal(e.getValue(), other.map.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return map.keySet().hashCode();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("{");
        boolean first = true;
        for (String k : sortedKeys()) {
            if (!first) {
                sb.append(", ");
            }
            first = false;
            sb.append(k).append('=').append(Values.describe(map.get(k)));
        }
        return sb.append('}').toString();
    }
}
