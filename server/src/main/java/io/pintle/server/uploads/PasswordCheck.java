package io.pintle.server.uploads;

/** Checks HTTP Basic credentials of the upload routes: a password file, or one guarded by a {@link LoginThrottle}. */
@FunctionalInterface
public interface PasswordCheck {
    /**
     * @param user a user name
     * @param password the password it came with
     * @return whether they are accepted
     */
    boolean verify(String user, String password);
}
