package org.cetp.inspector.relay.core;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Native objects handed out as opaque handle ids for one connection. Ids carry random bits
 * so a handle from one connection is never valid on another; everything is released on
 * close_handle or when the connection ends.
 */
public final class HandleTable {
    private final Map<String, Object> objects = new HashMap<String, Object>();
    private final String prefix;
    private final Platform platform;
    private int next = 1;

    public HandleTable(Platform platform) {
        this.platform = platform;
        byte[] r = new byte[4];
        new SecureRandom().nextBytes(r);
        this.prefix = Digests.hex(r);
    }

    public synchronized String register(String kind, Object nativeObject) throws RelayException {
        if (objects.size() >= Limits.MAX_HANDLES) {
            throw new RelayException(RelayException.BUSY, "too many open handles ("
                    + Limits.MAX_HANDLES + "); close some with close_handle");
        }
        String id = kind + "-" + prefix + "-" + (next++);
        objects.put(id, nativeObject);
        return id;
    }

    public synchronized Object get(String id) throws RelayException {
        Object o = objects.get(id);
        if (o == null) {
            throw new RelayException(RelayException.NOT_FOUND, "no open handle '" + id
                    + "' on this connection");
        }
        return o;
    }

    public boolean close(String id) {
        Object o;
        synchronized (this) {
            o = objects.remove(id);
        }
        if (o == null) {
            return false;
        }
        platform.release(o);
        return true;
    }

    public void closeAll() {
        List<Object> all;
        synchronized (this) {
            all = new ArrayList<Object>(objects.values());
            objects.clear();
        }
        for (Object o : all) {
            platform.release(o);
        }
    }

    public synchronized int size() {
        return objects.size();
    }
}
