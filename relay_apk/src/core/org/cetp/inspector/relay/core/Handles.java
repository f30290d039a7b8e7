package org.cetp.inspector.relay.core;

/** Handle value types (docs/relay-protocol.md §2, tags 0x08, 0x09) and the unsupported marker. */
public final class Handles {
    private Handles() {
    }

    /** A PendingIntent kept by the relay; flags per the protocol's bit table. */
    public static final class PendingIntentRef {
        public static final int IMMUTABLE_KNOWN = 1;
        public static final int IMMUTABLE = 2;
        public static final int KIND_KNOWN = 4;
        public static final int ACTIVITY = 8;

        public final String id;
        public final String creatorPackage;
        public final int flags;

        public PendingIntentRef(String id, String creatorPackage, int flags) {
            this.id = id;
            this.creatorPackage = creatorPackage == null ? "" : creatorPackage;
            this.flags = flags;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof PendingIntentRef)) {
                return false;
            }
            PendingIntentRef p = (PendingIntentRef) o;
            return id.equals(p.id) && creatorPackage.equals(p.creatorPackage) && flags == p.flags;
        }

        @Override
        public int hashCode() {
            return id.hashCode();
        }

        @Override
        public String toString() {
            return "PendingIntent(" + id + ", " + creatorPackage + ", " + flags + ")";
        }
    }

    /** A ParcelFileDescriptor kept by the relay; size from fstat or -1. */
    public static final class FileRef {
        public final String id;
        public final long size;

        public FileRef(String id, long size) {
            this.id = id;
            this.size = size;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof FileRef && id.equals(((FileRef) o).id) && size == ((FileRef) o).size;
        }

        @Override
        public int hashCode() {
            return id.hashCode();
        }

        @Override
        public String toString() {
            return "FileDescriptor(" + id + ", " + size + ")";
        }
    }

    /** A reply value the relay cannot map: its Java class name, never dropped silently. */
    public static final class Unsupported {
        public final String className;

        public Unsupported(String className) {
            this.className = className;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Unsupported && className.equals(((Unsupported) o).className);
        }

        @Override
        public int hashCode() {
            return className.hashCode();
        }

        @Override
        public String toString() {
            return "unsupported(" + className + ")";
        }
    }
}
