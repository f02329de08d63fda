package io.pintle.server.remoterun;

import io.pintle.server.problem.PintleException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Conditions (CFEngine classes) a remote run defines, as relayd validates them: each {@code
 * ^[a-zA-Z0-9][a-zA-Z0-9_]*$}, all of them at most {@link #MAX_LENGTH} characters once joined with commas. Nothing
 * else can reach the agent's argv.
 *
 * @param values the conditions, without duplicates, in request order
 */
public record Conditions(List<String> values) {
    /** relayd's limit on the {@code conditions} field. */
    public static final int MAX_LENGTH = 1024;
    /** relayd's (and cf-serverd's {@code CharsetAcceptable}) rule for one condition. */
    public static final Pattern CONDITION = Pattern.compile("^[a-zA-Z0-9][a-zA-Z0-9_]*$");

    /** No condition. */
    public static final Conditions NONE = new Conditions(List.of());

    public Conditions {
        values = List.copyOf(new LinkedHashSet<>(values));
        int length = Math.max(0, values.size() - 1);
        for (String value : values) {
            if (value == null || !CONDITION.matcher(value).matches()) {
                throw new PintleException.InvalidRequest("invalid-condition", "condition '" + value
                        + "' does not match " + CONDITION.pattern());
            }
            length += value.length();
        }
        if (length > MAX_LENGTH) {
            throw new PintleException.InvalidRequest("invalid-condition", "conditions are " + length
                    + " characters long; at most " + MAX_LENGTH + " are accepted");
        }
    }

    /**
     * @param commaList relayd's form value ({@code a,b,c}), or null or empty for none
     * @return the conditions
     * @throws PintleException.InvalidRequest when one is invalid or they are too long
     */
    public static Conditions parse(String commaList) {
        if (commaList == null || commaList.isEmpty()) {
            return NONE;
        }
        if (commaList.length() > MAX_LENGTH) {
            throw new PintleException.InvalidRequest("invalid-condition", "conditions are " + commaList.length()
                    + " characters long; at most " + MAX_LENGTH + " are accepted");
        }
        return new Conditions(List.of(commaList.split(",", -1)));
    }

    /**
     * @param extra a condition to add (a verbosity), or null
     * @return these conditions and {@code extra}
     */
    public Conditions with(String extra) {
        if (extra == null) {
            return this;
        }
        List<String> all = new ArrayList<>(values);
        all.add(extra);
        return new Conditions(all);
    }

    /** @return whether there is none */
    public boolean isEmpty() {
        return values.isEmpty();
    }

    /** @return relayd's and the agent's form: {@code a,b,c} */
    public String joined() {
        return String.join(",", values);
    }
}
