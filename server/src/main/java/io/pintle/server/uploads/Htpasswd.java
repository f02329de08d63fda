package io.pintle.server.uploads;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.commons.codec.digest.Crypt;
import org.apache.commons.codec.digest.Md5Crypt;
import org.bouncycastle.crypto.generators.OpenBSDBCrypt;

/**
 * A password file as Apache's {@code htpasswd} writes it ({@code user:hash} per line; empty lines and lines starting
 * with {@code #} skipped, as Apache's {@code mod_authn_file} does), checked the way Apache checks it: MD5
 * {@code $apr1$} (htpasswd's default), bcrypt {@code $2y$} ({@code -B}), {@code {SHA}} ({@code -s}) and the system's
 * crypt ({@code -d} DES, and glibc's {@code $1$}, {@code $5$}, {@code $6$}). The hashes are computed by
 * commons-codec and BouncyCastle, never here. A line in another format is refused when the file is loaded (Apache
 * on Linux would only ever fail such a password, silently), so a broken file never replaces a good one.
 *
 * <p>A user the file does not hold costs what a user it holds costs: the password is checked against the file's
 * costliest hash (a decoy) and refused whatever the outcome, so that the time of a refusal does not tell which user
 * names exist (Apache answers an unknown user at once). Hashes are compared in constant time.
 *
 * <p>Immutable apart from a small cache of credentials already verified against this very file (bcrypt costs
 * milliseconds per check, and every report upload checks); a reload builds a new instance with an empty cache.
 */
public final class Htpasswd implements PasswordCheck {
    private static final String APR1 = "$apr1$";
    private static final String SHA = "{SHA}";
    private static final Pattern APR1_FORM = Pattern.compile("\\$apr1\\$[./0-9A-Za-z]{0,8}\\$[./0-9A-Za-z]{22}");
    private static final Pattern BCRYPT_FORM = Pattern.compile("\\$2[aby]\\$\\d{2}\\$[./0-9A-Za-z]{53}");
    private static final Pattern SHA_FORM = Pattern.compile("\\{SHA}[A-Za-z0-9+/]{27}=");
    private static final Pattern MD5_CRYPT_FORM = Pattern.compile("\\$1\\$[./0-9A-Za-z]{0,8}\\$[./0-9A-Za-z]{22}");
    private static final Pattern SHA_CRYPT_FORM = Pattern.compile(
            "\\$[56]\\$(rounds=\\d{1,9}\\$)?[./0-9A-Za-z]{0,16}\\$([./0-9A-Za-z]{43}|[./0-9A-Za-z]{86})");
    private static final Pattern DES_FORM = Pattern.compile("[./0-9A-Za-z]{13}");
    private static final Pattern SHA_CRYPT_ROUNDS = Pattern.compile("\\$[56]\\$rounds=(\\d{1,9})\\$");
    private static final int CACHE_ENTRIES = 256;

    /** An empty file: nobody may upload. */
    public static final Htpasswd EMPTY = new Htpasswd(Map.of());

    private final Map<String, String> hashes;
    /** The costliest hash of the file, which an unknown user's password is checked against; null without users. */
    private final String decoy;
    /** Credentials verified against this file; none for a file without users (nothing ever verifies). */
    private final Set<String> verified;
    /**
     * Hashes computed, for a test to see that an unknown user costs one as a known user does; null for a file
     * without users, which computes none (so that {@link #EMPTY} holds nothing mutable).
     */
    private final LongAdder computed;

    private Htpasswd(Map<String, String> hashes) {
        this.hashes = Map.copyOf(hashes);
        this.decoy = hashes.values().stream().max(Comparator.comparingDouble(Htpasswd::cost)).orElse(null);
        this.verified = hashes.isEmpty() ? Set.of() : ConcurrentHashMap.newKeySet();
        this.computed = hashes.isEmpty() ? null : new LongAdder();
    }

    /**
     * @param content the file's bytes
     * @param file where they come from, for errors
     * @return the users and their hashes
     * @throws IOException naming the file, the line and what is wrong with it (never the hash)
     */
    public static Htpasswd parse(byte[] content, Path file) throws IOException {
        String text = new String(content, StandardCharsets.UTF_8);
        Map<String, String> hashes = new HashMap<>();
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int colon = line.indexOf(':');
            if (colon <= 0) {
                throw new IOException(file + ": line " + (i + 1) + " is not 'user:hash' (as htpasswd writes it)");
            }
            String user = line.substring(0, colon);
            String hash = line.substring(colon + 1);
            if (!known(hash)) {
                throw new IOException(file + ": line " + (i + 1) + ": the password of user '" + user
                        + "' is not in a format htpasswd writes ($apr1$, $2y$ bcrypt, {SHA} or crypt); recreate it "
                        + "with htpasswd");
            }
            // Apache uses a user's first line.
            hashes.putIfAbsent(user, hash);
        }
        return new Htpasswd(hashes);
    }

    private static boolean known(String hash) {
        return APR1_FORM.matcher(hash).matches() || BCRYPT_FORM.matcher(hash).matches()
                || SHA_FORM.matcher(hash).matches() || MD5_CRYPT_FORM.matcher(hash).matches()
                || SHA_CRYPT_FORM.matcher(hash).matches() || DES_FORM.matcher(hash).matches();
    }

    /** @return how many users the file holds */
    public int users() {
        return hashes.size();
    }

    /**
     * @param user a user name
     * @param password the password it came with
     * @return whether the file holds that user with that password
     */
    @Override
    public boolean verify(String user, String password) {
        String hash = hashes.get(user);
        if (hash == null) {
            if (decoy != null) {
                matches(decoy, password);
            }
            return false;
        }
        String key = user + '\0' + sha256(password);
        if (verified.contains(key)) {
            return true;
        }
        boolean matches = matches(hash, password);
        if (matches) {
            if (verified.size() >= CACHE_ENTRIES) {
                verified.clear();
            }
            verified.add(key);
        }
        return matches;
    }

    private boolean matches(String hash, String password) {
        computed.increment();
        byte[] candidate = password.getBytes(StandardCharsets.UTF_8);
        try {
            if (hash.startsWith(APR1)) {
                return same(Md5Crypt.apr1Crypt(candidate, hash), hash);
            }
            if (hash.startsWith("$2")) {
                return OpenBSDBCrypt.checkPassword(hash, password.toCharArray());
            }
            if (hash.startsWith(SHA)) {
                return same(SHA + Base64.getEncoder().encodeToString(digest("SHA-1", candidate)), hash);
            }
            return same(Crypt.crypt(candidate, hash), hash);
        } catch (IllegalArgumentException e) {
            // A password bcrypt or crypt cannot take (bcrypt's limit is 72 bytes): it matches nothing.
            return false;
        }
    }

    /**
     * Roughly what checking a password against the hash costs, in microseconds on a current core: only to pick the
     * decoy, the costliest hash of a file. bcrypt doubles per cost step; SHA-crypt costs its rounds (5,000 unless
     * written), SHA-512's a little more than SHA-256's; MD5-crypt and {@code $apr1$} 1,000 MD5 rounds; DES crypt
     * 25 DES rounds; {@code {SHA}} one SHA-1.
     */
    static double cost(String hash) {
        if (hash.startsWith("$2")) {
            return Math.pow(2, Integer.parseInt(hash.substring(4, 6))) * 80;
        }
        if (hash.startsWith("$5$") || hash.startsWith("$6$")) {
            Matcher rounds = SHA_CRYPT_ROUNDS.matcher(hash);
            long count = rounds.lookingAt() ? Math.min(Math.max(Long.parseLong(rounds.group(1)), 1_000), 999_999_999)
                    : 5_000;
            return count * (hash.startsWith("$6$") ? 1.0 : 0.8);
        }
        if (hash.startsWith(APR1) || hash.startsWith("$1$")) {
            return 300;
        }
        if (hash.startsWith(SHA)) {
            return 1;
        }
        return 30;
    }

    /** @return the hash an unknown user's password is checked against, or null for a file without users */
    String decoy() {
        return decoy;
    }

    /** @return how many hashes were computed: one per check, but for credentials already verified */
    long computed() {
        return computed == null ? 0 : computed.sum();
    }

    private static boolean same(String computed, String stored) {
        return MessageDigest.isEqual(computed.getBytes(StandardCharsets.US_ASCII),
                stored.getBytes(StandardCharsets.US_ASCII));
    }

    private static String sha256(String password) {
        return Base64.getEncoder().encodeToString(digest("SHA-256", password.getBytes(StandardCharsets.UTF_8)));
    }

    private static byte[] digest(String algorithm, byte[] input) {
        try {
            return MessageDigest.getInstance(algorithm).digest(input);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has " + algorithm, e);
        }
    }

    /**
     * Writes an entry as {@code htpasswd -m} does (MD5 {@code $apr1$}, a random salt), for the demo and tests.
     *
     * @param user the user
     * @param password the password
     * @return the line, without its newline
     */
    public static String apr1Line(String user, String password) {
        return user + ":" + Md5Crypt.apr1Crypt(password.getBytes(StandardCharsets.UTF_8));
    }
}
