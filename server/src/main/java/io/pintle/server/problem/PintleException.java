package io.pintle.server.problem;

/**
 * A refusal of a client's request: what kind it is (the subclass), a stable reason code and a detail an operator
 * can act on. It carries no HTTP status: the web layer's problem writer maps each kind to one.
 */
public abstract sealed class PintleException extends RuntimeException
        permits PintleException.AccessDenied, PintleException.NotFound, PintleException.Conflict,
                PintleException.InvalidRequest, PintleException.Unavailable, PintleException.TooLarge, PintleException.LengthRequired,
                PintleException.UnsupportedMediaType, PintleException.UpstreamFailed, PintleException.UpstreamTimedOut,
                PintleException.TooSlow, PintleException.Unauthorized, PintleException.InsufficientStorage,
                PintleException.TooManyRequests {
    private static final long serialVersionUID = 1L;

    private final String reason;

    PintleException(String reason, String detail) {
        super(detail, null, false, false);
        this.reason = reason;
    }

    /** @return the stable reason code */
    public String reason() {
        return reason;
    }

    /** @return the detail for the client */
    public String detail() {
        return getMessage();
    }

    /** The caller may not do this; says why, never whether the path exists. */
    public static final class AccessDenied extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail why
         */
        public AccessDenied(String reason, String detail) {
            super(reason, detail);
        }
    }

    /** Nothing at this path (including paths that resolve outside their tree), or no such route or node. */
    public static final class NotFound extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail what was not found
         */
        public NotFound(String reason, String detail) {
            super(reason, detail);
        }
    }

    /** The request conflicts with another in progress (a second report on one order, a replaced poll). */
    public static final class Conflict extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail what it conflicts with
         */
        public Conflict(String reason, String detail) {
            super(reason, detail);
        }
    }

    /** The request itself is wrong: a parameter, a header, a body. */
    public static final class InvalidRequest extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail what is wrong
         */
        public InvalidRequest(String reason, String detail) {
            super(reason, detail);
        }
    }

    /** A bounded resource is exhausted; the client should come back after {@code retryAfterSeconds}. */
    public static final class Unavailable extends PintleException {
        private static final long serialVersionUID = 1L;

        private final long retryAfterSeconds;

        /**
         * @param reason reason code
         * @param detail what is exhausted
         * @param retryAfterSeconds when to come back
         */
        public Unavailable(String reason, String detail, long retryAfterSeconds) {
            super(reason, detail);
            this.retryAfterSeconds = retryAfterSeconds;
        }

        /** @return when to come back, in seconds */
        public long retryAfterSeconds() {
            return retryAfterSeconds;
        }
    }

    /** The request's body is larger than this server accepts. */
    public static final class TooLarge extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail the size and the limit
         */
        public TooLarge(String reason, String detail) {
            super(reason, detail);
        }
    }

    /** The request's body must announce its length. */
    public static final class LengthRequired extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail the limit it is checked against
         */
        public LengthRequired(String reason, String detail) {
            super(reason, detail);
        }
    }

    /** The request's body is in a format this route does not read. */
    public static final class UnsupportedMediaType extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail which formats it reads
         */
        public UnsupportedMediaType(String reason, String detail) {
            super(reason, detail);
        }
    }

    /**
     * The request had to go to another server (the policy server, or the webapp behind {@code /rudder/}), which
     * could not be reached or did not answer.
     */
    public static final class UpstreamFailed extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail what failed
         */
        public UpstreamFailed(String reason, String detail) {
            super(reason, detail);
        }
    }

    /** The request went to another server (the webapp behind {@code /rudder/}), which stayed silent too long. */
    public static final class UpstreamTimedOut extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail who did not answer, and the timeout
         */
        public UpstreamTimedOut(String reason, String detail) {
            super(reason, detail);
        }
    }

    /** The client sent its request body slower than the server's floor; what it sent is dropped. */
    public static final class TooSlow extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail what arrived, in how long, and the floor
         */
        public TooSlow(String reason, String detail) {
            super(reason, detail);
        }
    }

    /** The request needs credentials it did not carry, or carried wrong ones (HTTP Basic, as Rudder's Apache asks). */
    public static final class Unauthorized extends PintleException {
        private static final long serialVersionUID = 1L;

        private final String realm;

        /**
         * @param reason reason code
         * @param detail what was missing or wrong (never the credentials)
         * @param realm the Basic realm to challenge with
         */
        public Unauthorized(String reason, String detail, String realm) {
            super(reason, detail);
            this.realm = realm;
        }

        /** @return the {@code WWW-Authenticate} header's value */
        public String challenge() {
            return "Basic realm=\"" + realm + "\"";
        }
    }

    /** The server has no room for what the client sent (disk full, quota); nothing of it was kept. */
    public static final class InsufficientStorage extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail where there was no room
         */
        public InsufficientStorage(String reason, String detail) {
            super(reason, detail);
        }
    }

    /**
     * The client's own failures stop it for a while (too many failed logins from its address); the client should
     * come back after {@code retryAfterSeconds}. Not the server's overload: that is {@link Unavailable}.
     */
    public static final class TooManyRequests extends PintleException {
        private static final long serialVersionUID = 1L;

        private final long retryAfterSeconds;

        /**
         * @param reason reason code
         * @param detail what the client did and what its operator can do
         * @param retryAfterSeconds when to come back
         */
        public TooManyRequests(String reason, String detail, long retryAfterSeconds) {
            super(reason, detail);
            this.retryAfterSeconds = retryAfterSeconds;
        }

        /** @return when to come back, in seconds */
        public long retryAfterSeconds() {
            return retryAfterSeconds;
        }
    }
}
