package org.cetp.inspector.relay.core;

/** Typed access to request args; a missing or mistyped arg is BAD_ARGS naming the key. */
public final class Args {
    private final String op;
    private final TypedBundle b;

    public Args(String op, TypedBundle b) {
        this.op = op;
        this.b = b == null ? new TypedBundle() : b;
    }

    private RelayException bad(String key, String expected) {
        return new RelayException(RelayException.BAD_ARGS, op + ": argument '" + key
                + "' must be " + expected + ", got " + Values.describe(b.get(key)));
    }

    public String string(String key) throws RelayException {
        Object v = b.get(key);
        if (!(v instanceof String)) {
            throw bad(key, "a String");
        }
        return (String) v;
    }

    public String optString(String key) throws RelayException {
        Object v = b.get(key);
        if (v == null) {
            return null;
        }
        if (!(v instanceof String)) {
            throw bad(key, "a String or null");
        }
        return (String) v;
    }

    public int integer(String key) throws RelayException {
        Object v = b.get(key);
        if (!(v instanceof Integer)) {
            throw bad(key, "an int");
        }
        return (Integer) v;
    }

    public int optInt(String key, int dflt) throws RelayException {
        return b.get(key) == null ? dflt : integer(key);
    }

    /** A long argument; an int is accepted too (widening loses nothing). */
    public long longValue(String key) throws RelayException {
        Object v = b.get(key);
        if (v instanceof Long) {
            return (Long) v;
        }
        if (v instanceof Integer) {
            return (Integer) v;
        }
        throw bad(key, "a long");
    }

    public boolean bool(String key, boolean dflt) throws RelayException {
        Object v = b.get(key);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof Boolean)) {
            throw bad(key, "a boolean");
        }
        return (Boolean) v;
    }

    public TypedBundle optBundle(String key) throws RelayException {
        Object v = b.get(key);
        if (v == null) {
            return null;
        }
        if (!(v instanceof TypedBundle)) {
            throw bad(key, "a Bundle or null");
        }
        return (TypedBundle) v;
    }

    public String[] strings(String key) throws RelayException {
        Object v = b.get(key);
        if (v == null) {
            return new String[0];
        }
        if (!(v instanceof String[])) {
            throw bad(key, "a String[]");
        }
        return (String[]) v;
    }

    /** timeout_ms: default 30 000, 1 … 120 000 (docs/relay-protocol.md §4). */
    public int timeoutMs() throws RelayException {
        int t = optInt("timeout_ms", Limits.DEFAULT_TIMEOUT_MS);
        if (t <= 0 || t > Limits.MAX_TIMEOUT_MS) {
            throw new RelayException(RelayException.BAD_ARGS, op + ": timeout_ms must be 1 … "
                    + Limits.MAX_TIMEOUT_MS + ", got " + t);
        }
        return t;
    }
}
