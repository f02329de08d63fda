package io.pintle.server.problem;

/** An error for the client, with its status, reason code and detail. */
public abstract sealed class PintleException extends RuntimeException
        permits PintleException.AccessDenied, PintleException.NotFound, PintleException.InvalidRequest,
                PintleException.Unavailable, PintleException.Refused {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String title;
    private final String reason;

    PintleException(int status, String title, String reason, String detail) {
        super(detail, null, false, false);
        this.status = status;
        this.title = title;
        this.reason = reason;
    }

    /** @return the HTTP status */
    public int status() {
        return status;
    }

    /** @return the fixed title of this kind of problem */
    public String title() {
        return title;
    }

    /** @return the stable reason code */
    public String reason() {
        return reason;
    }

    /** @return the detail for the client */
    public String detail() {
        return getMessage();
    }

    /** 403: the caller may not read this; says why, never whether the path exists. */
    public static final class AccessDenied extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail why
         */
        public AccessDenied(String reason, String detail) {
            super(403, "Access denied", reason, detail);
        }
    }

    /** 404: nothing to serve at this path (including paths that resolve outside their tree). */
    public static final class NotFound extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail what was not found
         */
        public NotFound(String reason, String detail) {
            super(404, "Not found", reason, detail);
        }
    }

    /** 400: the request itself is malformed or unsafe. */
    public static final class InvalidRequest extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason reason code
         * @param detail what is wrong
         */
        public InvalidRequest(String reason, String detail) {
            super(400, "Invalid request", reason, detail);
        }
    }

    /** 503: a bounded resource is exhausted; the client should come back after {@code Retry-After}. */
    public static final class Unavailable extends PintleException {
        private static final long serialVersionUID = 1L;

        private final long retryAfterSeconds;

        /**
         * @param reason reason code
         * @param detail what is exhausted
         * @param retryAfterSeconds the {@code Retry-After} to send
         */
        public Unavailable(String reason, String detail, long retryAfterSeconds) {
            super(503, "Service Unavailable", reason, detail);
            this.retryAfterSeconds = retryAfterSeconds;
        }

        /** @return the {@code Retry-After} to send, in seconds */
        public long retryAfterSeconds() {
            return retryAfterSeconds;
        }
    }

    /** Any other 4xx or 5xx a route decides on, with its reason (411, 413, 502...). */
    public static final class Refused extends PintleException {
        private static final long serialVersionUID = 1L;

        /**
         * @param status the HTTP status
         * @param reason reason code
         * @param detail why
         */
        public Refused(int status, String reason, String detail) {
            super(status, title(status), reason, detail);
        }

        private static String title(int status) {
            return switch (status) {
                case 400 -> "Invalid request";
                case 403 -> "Access denied";
                case 404 -> "Not found";
                case 411 -> "Length Required";
                case 413 -> "Content Too Large";
                case 502 -> "Bad Gateway";
                case 504 -> "Gateway Timeout";
                default -> "HTTP " + status;
            };
        }
    }
}
