package io.pintle.server.policy;

/** A request path that could leave its root or is not in canonical form; the message says which rule. */
public class UnsafePathException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * @param message the rule the path broke
     */
    public UnsafePathException(String message) {
        super(message);
    }
}
