package io.pintle.server.nodes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads Rudder's {@code /opt/rudder/etc/rudder-apache-nodes-auth.conf} in place: the Apache fragment with which an
 * organisation tells Rudder's vhost, in certificate-validation mode, where its certificates carry the node id
 * (rudder-doc, "security", Rudder #27820). Each condition compares a certificate value with the path's node id
 * ({@code $1}):
 *
 * <pre>
 * SSLUserName SSL_CLIENT_SAN_DNS_0
 * RewriteCond "%{SSL:SSL_CLIENT_SAN_DNS_0}=rudder-$1.company.com" "^(.+)=\1$" [OR]
 * RewriteCond "%{SSL:SSL_CLIENT_S_DN_UID}=$1" "^(.+)=\1$"
 * </pre>
 *
 * <p>Each condition becomes an {@link IdRule}: {@code SSL_CLIENT_S_DN_UID} with {@code $1} alone is {@code uid};
 * {@code SSL_CLIENT_SAN_DNS_<n>} with a template reads the n-th DNS SAN only and compares it exactly (any case with
 * {@code [NC]}), as Apache does. Conditions must be alternatives ({@code [OR]} on all but the last), as the
 * documentation writes them. Anything else this file could hold in Apache is refused with its
 * line number, rather than read differently: write such a rule in {@code [nodes] id_rules} instead.
 */
public final class ApacheIdRules {
    /** Where Rudder's agent expects the file. */
    public static final String RUDDER_FILE = "/opt/rudder/etc/rudder-apache-nodes-auth.conf";

    private static final Pattern CONDITION = Pattern.compile(
            "RewriteCond\\s+\"%\\{SSL:(SSL_CLIENT_[A-Za-z0-9_]+)}=([^\"]*)\"\\s+\"\\^\\(\\.\\+\\)=\\\\1\\$\"\\s*(\\[[A-Za-z, ]+])?");
    private static final Pattern SAN_DNS = Pattern.compile("SSL_CLIENT_SAN_DNS_[0-9]+");

    private ApacheIdRules() {}

    /**
     * @param content the file's bytes
     * @param file its path, for messages
     * @return its rules, in file order
     * @throws IOException naming the line Pintle cannot read as Apache would
     */
    public static List<IdRule> parse(byte[] content, Path file) throws IOException {
        List<IdRule> rules = new ArrayList<>();
        boolean lastWasOr = true;
        String[] lines = new String(content, StandardCharsets.UTF_8).split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            String where = file + ":" + (i + 1) + ": ";
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String keyword = line.split("\\s+", 2)[0].toLowerCase(Locale.ROOT);
            if (keyword.equals("sslusername")) {
                continue;
            }
            if (!keyword.equals("rewritecond")) {
                throw new IOException(where + "Pintle reads only RewriteCond and SSLUserName lines of this file, not '"
                        + abbreviate(line) + "'; write the rule in [nodes] id_rules instead");
            }
            Matcher matcher = CONDITION.matcher(line);
            if (!matcher.matches()) {
                throw new IOException(where + "not a condition of the form RewriteCond \"%{SSL:<variable>}=<template "
                        + "with $1>\" \"^(.+)=\\1$\" [OR]: '" + abbreviate(line) + "'");
            }
            if (!lastWasOr) {
                throw new IOException(where + "the condition before this one has no [OR]: Apache would require both, "
                        + "Pintle reads alternatives only; write [OR] on all but the last condition");
            }
            String flags = matcher.group(3) == null ? "" : matcher.group(3).toUpperCase(Locale.ROOT);
            lastWasOr = flags.contains("OR");
            rules.add(rule(matcher.group(1), matcher.group(2), flags.contains("NC"), where));
        }
        if (rules.isEmpty()) {
            throw new IOException(file + ": no RewriteCond line: the file names no place for the node id (remove it "
                    + "to read the subject UID)");
        }
        return List.copyOf(rules);
    }

    private static IdRule rule(String variable, String template, boolean noCase, String where) throws IOException {
        int at = template.indexOf("$1");
        if (at < 0 || template.indexOf("$1", at + 1) >= 0 || template.indexOf('$') != at
                || template.contains(IdRule.PLACEHOLDER)) {
            throw new IOException(where + "the template '" + template + "' must hold $1 (the path's node id) once and "
                    + "no other substitution");
        }
        if (variable.equals("SSL_CLIENT_S_DN_UID")) {
            if (!template.equals("$1")) {
                throw new IOException(where + "the subject UID is compared with the node id itself; '" + template
                        + "' around it is not supported");
            }
            return IdRule.UID;
        }
        if (SAN_DNS.matcher(variable).matches()) {
            // As Apache reads it: the n-th DNS SAN only, compared exactly unless [NC].
            int index = Integer.parseInt(variable.substring("SSL_CLIENT_SAN_DNS_".length()));
            return new IdRule.San(IdRule.San.DNS, template.substring(0, at), template.substring(at + 2), index,
                    noCase);
        }
        throw new IOException(where + "Pintle reads the node id from SSL_CLIENT_S_DN_UID or SSL_CLIENT_SAN_DNS_<n>, "
                + "not " + variable + "; write the rule in [nodes] id_rules (uid, san-dns:, san-uri:)");
    }

    private static String abbreviate(String line) {
        return line.length() > 120 ? line.substring(0, 120) + "..." : line;
    }
}
