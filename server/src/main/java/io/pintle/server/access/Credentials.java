package io.pintle.server.access;

import io.pintle.server.uploads.PasswordCheck;

/**
 * What a request carries for the rules beside its address and certificate.
 *
 * @param authorization its {@code Authorization} header (HTTP Basic, for uploads), or null
 * @param apiVersion its {@code X-API-Version} header (the webapp's legacy API), or null
 * @param logins wraps an upload route's password file before it is checked (the login throttle of the caller's
 *     address); {@link #NONE}'s checks it as it is
 */
public record Credentials(String authorization, String apiVersion, LoginGuard logins) {
    /** No header, no throttle: what {@code pintle explain} asks with. */
    public static final Credentials NONE = new Credentials(null, null, (users, file) -> users);

    /** Wraps a password file before a login is checked against it. */
    @FunctionalInterface
    public interface LoginGuard {
        /**
         * @param users the route's password file, parsed
         * @param usersFile its name, for messages
         * @return what checks the login
         */
        PasswordCheck guard(PasswordCheck users, String usersFile);
    }
}
