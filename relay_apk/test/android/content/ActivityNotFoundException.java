package android.content;

/** Host-JVM stand-in for the framework class (same name), so the core's mapping is tested. */
public class ActivityNotFoundException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ActivityNotFoundException(String message) {
        super(message);
    }
}
