package org.cetp.inspector.relay.core;

import java.util.ArrayList;
import java.util.List;

/** Fans platform events out to the connections that asked for them in their hello. */
public final class EventHub implements Platform.EventListener {
    private final List<Connection> connections = new ArrayList<Connection>();

    public synchronized void add(Connection c) {
        connections.add(c);
    }

    public synchronized void remove(Connection c) {
        connections.remove(c);
    }

    public synchronized int size() {
        return connections.size();
    }

    @Override
    public void onEvent(TypedBundle event) {
        List<Connection> targets;
        synchronized (this) {
            targets = new ArrayList<Connection>(connections);
        }
        for (Connection c : targets) {
            c.emit(event);
        }
    }
}
