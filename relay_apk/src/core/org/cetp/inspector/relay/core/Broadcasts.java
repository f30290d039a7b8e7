package org.cetp.inspector.relay.core;

import java.security.SecureRandom;

/**
 * The broadcast bridge's rules, plain Java so they are tested on the host JVM.
 *
 * <ul>
 * <li>Apps are installed, and left by a force-stop, in the stopped state, and broadcasts skip
 * stopped packages unless the sender sets FLAG_INCLUDE_STOPPED_PACKAGES (frameworks/base
 * commit e7f972122db8 "Introduce application stopped state"; Intent.FLAG_INCLUDE_STOPPED_PACKAGES
 * = 0x20, ApplicationInfo.FLAG_STOPPED = 1 &lt;&lt; 21). The real AndyClaw host does not set the
 * flag, so the relay only does when asked ({@code include_stopped}), and reports the target's
 * stopped state so a timeout explains itself.</li>
 * <li>The reply receiver must be exported (another app answers it), so anyone could answer a
 * predictable action. The relay appends a random suffix per call: only the receiver of this
 * broadcast learns the action it must answer on.</li>
 * </ul>
 */
public final class Broadcasts {
    public static final int FLAG_INCLUDE_STOPPED_PACKAGES = 0x20;
    public static final int FLAG_STOPPED = 1 << 21;
    private static final SecureRandom RANDOM = new SecureRandom();

    private Broadcasts() {
    }

    /** {@code base} plus ".r" and 32 random hex digits: unguessable, still a valid action. */
    public static String replyAction(String base) {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return base + ".r" + Digests.hex(b);
    }

    /** Intent flags for the request broadcast. */
    public static int intentFlags(boolean includeStopped) {
        return includeStopped ? FLAG_INCLUDE_STOPPED_PACKAGES : 0;
    }

    /** Whether ApplicationInfo.flags say the package is stopped. */
    public static boolean isStopped(int applicationFlags) {
        return (applicationFlags & FLAG_STOPPED) != 0;
    }

    /** Why no reply came, in words for the timeout's {@code detail}. */
    public static String explainTimeout(Boolean targetStopped, boolean includeStopped,
                                        int timeoutMs) {
        String base = "no reply within " + timeoutMs + " ms";
        if (targetStopped == null) {
            return base + " (the target's stopped state is unknown)";
        }
        if (targetStopped && !includeStopped) {
            return base + ": the target is in the stopped state (never launched since install,"
                    + " or force-stopped) and Android does not deliver broadcasts to stopped"
                    + " apps; the real host would time out too. Launch the app once, or retry"
                    + " with include_stopped to deliver anyway";
        }
        return base + ": the target is " + (targetStopped ? "stopped but include_stopped"
                + " was set" : "not stopped") + ", so Android delivered the broadcast (unless"
                + " its receiver is disabled or missing), but nothing answered on the reply action";
    }
}
