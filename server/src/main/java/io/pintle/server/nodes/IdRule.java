package io.pintle.server.nodes;

import java.util.List;
import java.util.Objects;

/**
 * Where certificate-validation mode reads a node's id in a CA-signed certificate ({@code [nodes] id_rules}): the
 * subject's {@code UID}, as Rudder's Apache does by default ({@code SSL_CLIENT_S_DN_UID}), or a subject
 * alternative name of a given type shaped by a template, as Rudder's {@code rudder-apache-nodes-auth.conf} lets an
 * organisation whose CA puts the id in a SAN say ({@code %{SSL:SSL_CLIENT_SAN_DNS_0}=rudder-$1.example.com}).
 *
 * <p>Written {@code uid}, {@code san-dns:<template>} or {@code san-uri:<template>}, where the template holds
 * {@code {id}} once: {@code san-dns:{id}.nodes.example.com}, {@code san-uri:urn:rudder:node:{id}}. Every SAN of the
 * type is tried; DNS names compare without regard to case, as DNS does. A certificate with two matching SANs that
 * name different ids names none.
 */
public sealed interface IdRule {
    /** The placeholder of a template. */
    String PLACEHOLDER = "{id}";

    /** The subject's {@code UID} attribute. */
    IdRule UID = new SubjectUid();

    /**
     * @param certificate a client certificate, read
     * @return what this rule reads in it: an id, or why none
     */
    Outcome read(ClientCertificate certificate);

    /** @return the rule as the configuration writes it */
    String text();

    /**
     * What a rule found.
     *
     * @param id the id, or null when none
     * @param problem why none, for an operator, or null
     */
    record Outcome(String id, String problem) {
        static Outcome found(String id) {
            return new Outcome(Objects.requireNonNull(id), null);
        }

        static Outcome none(String problem) {
            return new Outcome(null, Objects.requireNonNull(problem));
        }
    }

    /**
     * @param text {@code uid}, {@code san-dns:<template>} or {@code san-uri:<template>}
     * @return the rule
     * @throws IllegalArgumentException saying what is wrong with it
     */
    static IdRule parse(String text) {
        if (text.equals("uid")) {
            return UID;
        }
        int colon = text.indexOf(':');
        String kind = colon < 0 ? text : text.substring(0, colon);
        if (colon < 0 || !(kind.equals("san-dns") || kind.equals("san-uri"))) {
            throw new IllegalArgumentException("'" + text + "' is not an id rule: write uid, san-dns:<template> or "
                    + "san-uri:<template>, the template holding {id} once (san-dns:{id}.nodes.example.com)");
        }
        String template = text.substring(colon + 1);
        int at = template.indexOf(PLACEHOLDER);
        if (at < 0 || template.indexOf(PLACEHOLDER, at + 1) >= 0) {
            throw new IllegalArgumentException("'" + text + "': the template must hold " + PLACEHOLDER + " exactly "
                    + "once");
        }
        return new San(kind.equals("san-dns") ? San.DNS : San.URI, template.substring(0, at),
                template.substring(at + PLACEHOLDER.length()), San.ANY, kind.equals("san-dns"));
    }

    /** The subject's {@code UID}. */
    record SubjectUid() implements IdRule {
        @Override
        public Outcome read(ClientCertificate certificate) {
            if (certificate.uidProblem() != null) {
                return Outcome.none(certificate.uidProblem());
            }
            if (certificate.uid() == null) {
                return Outcome.none("the subject '" + certificate.certificate().getSubjectX500Principal().getName()
                        + "' has no UID attribute");
            }
            return Outcome.found(certificate.uid());
        }

        @Override
        public String text() {
            return "uid";
        }
    }

    /**
     * A subject alternative name of one type, {@code prefix + id + suffix}.
     *
     * @param type {@link #DNS} or {@link #URI} (the X.509 GeneralName tag)
     * @param prefix what comes before the id
     * @param suffix what comes after it
     * @param index which SAN of the type is read, from 0, as Apache's {@code SSL_CLIENT_SAN_DNS_<n>}; {@link #ANY}
     *     for every one
     * @param ignoreCase whether prefix and suffix match without regard to case (DNS rules written in Pintle's
     *     configuration; Apache's conditions compare exactly unless {@code [NC]})
     */
    record San(int type, String prefix, String suffix, int index, boolean ignoreCase) implements IdRule {
        /** dNSName. */
        public static final int DNS = 2;
        /** uniformResourceIdentifier. */
        public static final int URI = 6;
        /** Every SAN of the type. */
        public static final int ANY = -1;

        @Override
        public Outcome read(ClientCertificate certificate) {
            List<String> names = type == DNS ? certificate.dnsNames() : certificate.uris();
            if (index != ANY) {
                names = index < names.size() ? List.of(names.get(index)) : List.of();
            }
            String found = null;
            for (String name : names) {
                String id = match(name);
                if (id == null) {
                    continue;
                }
                if (found != null && !found.equals(id)) {
                    return Outcome.none("two " + kind() + " SANs match " + text() + " with different ids ("
                            + found + ", " + id + "): the certificate names no single node");
                }
                found = id;
            }
            if (found == null) {
                return Outcome.none("no " + kind() + " SAN" + (index == ANY ? "" : " at index " + index)
                        + " matches " + prefix + PLACEHOLDER + suffix + " (its " + kind() + " SANs: "
                        + (type == DNS ? certificate.dnsNames() : certificate.uris()) + ")");
            }
            return Outcome.found(found);
        }

        private String match(String name) {
            if (name.length() <= prefix.length() + suffix.length()) {
                return null;
            }
            if (!name.regionMatches(ignoreCase, 0, prefix, 0, prefix.length())
                    || !name.regionMatches(ignoreCase, name.length() - suffix.length(), suffix, 0, suffix.length())) {
                return null;
            }
            return name.substring(prefix.length(), name.length() - suffix.length());
        }

        private String kind() {
            return type == DNS ? "DNS" : "URI";
        }

        @Override
        public String text() {
            String text = (type == DNS ? "san-dns:" : "san-uri:") + prefix + PLACEHOLDER + suffix;
            if (index == ANY && ignoreCase == (type == DNS)) {
                return text;
            }
            return text + " (" + (index == ANY ? "any " + kind() + " SAN" : kind() + " SAN " + index)
                    + (ignoreCase ? ", any case" : ", exact case") + ")";
        }
    }
}
