package io.pintle.server.nodes;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.JsonEOFException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A JSON syntax error in the operator's words: what is wrong, where (line and column), and what was expected,
 * instead of the parser's feature flags and settings ({@code JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS},
 * {@code StreamReadConstraints.getMaxNameLength()}), which no operator can set.
 */
final class JsonMessages {
    private static final Pattern UNEXPECTED_CHARACTER = Pattern.compile("^Unexpected character \\('.*?' \\(code (\\d+)");
    private static final Pattern TOKEN = Pattern.compile("^(?:Non-standard|Unrecognized) token '([^']*)'");
    private static final String A_VALUE =
            "a value (a string in double quotes, a number, an object, a list, true, false or null)";
    /** Quoted text longer than this is cut: a message is one line. */
    private static final int QUOTE_LIMIT = 40;

    private JsonMessages() {}

    /**
     * @param e what the parser threw
     * @param constraints the limits the parser applied, to state them
     * @return what is wrong and where, e.g. {@code 'NaN' is not a JSON value (...) at line 3, column 17}
     */
    static String describe(JsonProcessingException e, StreamReadConstraints constraints) {
        return what(e, constraints) + at(e.getLocation());
    }

    private static String what(JsonProcessingException e, StreamReadConstraints constraints) {
        String original = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
        if (e instanceof StreamConstraintsException) {
            if (original.startsWith("Name length")) {
                return "a node id or field name longer than " + constraints.getMaxNameLength() + " characters";
            }
            if (original.startsWith("Number value length")) {
                return "a number longer than " + constraints.getMaxNumberLength() + " characters";
            }
            if (original.startsWith("String value length")) {
                return "a string longer than " + constraints.getMaxStringLength() + " characters";
            }
            if (original.contains("nesting depth")) {
                return "objects or lists nested deeper than " + constraints.getMaxNestingDepth() + " levels";
            }
            return "a value too large to read";
        }
        if (e instanceof JsonEOFException) {
            return "the file ends before the JSON is complete (truncated? a closing '}' or '\"' is missing)";
        }
        Matcher token = TOKEN.matcher(original);
        if (token.find()) {
            String text = cut(token.group(1));
            return original.startsWith("Non-standard")
                    ? "'" + text + "' is not a JSON value (numbers are digits; text goes in double quotes)"
                    : "unexpected text '" + text + "': expected " + A_VALUE;
        }
        Matcher character = UNEXPECTED_CHARACTER.matcher(original);
        if (character.find()) {
            return "unexpected " + character(Integer.parseInt(character.group(1))) + ": expected " + expectation(original);
        }
        if (original.contains("Illegal unquoted character")) {
            return "a control character inside a string (write it escaped, e.g. \\n or \\u0001)";
        }
        if (original.contains("Leading zeroes")) {
            return "a number with leading zeros";
        }
        if (original.contains("Invalid numeric value")) {
            return "a malformed number";
        }
        if (original.contains("UTF-8") || original.contains("UTF8")) {
            return "bytes that are not UTF-8 text";
        }
        if (original.contains("close marker")) {
            return "a closing bracket that does not match the one opened";
        }
        return "not well-formed JSON";
    }

    private static String expectation(String original) {
        if (original.contains("double-quote to start field name")) {
            return "a field name in double quotes";
        }
        if (original.contains("colon to separate field name and value")) {
            return "':' after a field name";
        }
        if (original.contains("comma to separate Object entries")) {
            return "',' or '}'";
        }
        if (original.contains("comma to separate Array entries")) {
            return "',' or ']'";
        }
        if (original.contains("expected close marker for Object")) {
            return "'}'";
        }
        if (original.contains("expected close marker for Array")) {
            return "']'";
        }
        return A_VALUE;
    }

    private static String character(int code) {
        if (code == '\'') {
            return "single quote (JSON strings take double quotes)";
        }
        return code < 0x20 || code == 0x7f
                ? "control character U+" + String.format("%04X", code)
                : "'" + Character.toString(code) + "'";
    }

    private static String at(JsonLocation location) {
        if (location == null || location.getLineNr() < 1) {
            return "";
        }
        return " at line " + location.getLineNr() + ", column " + location.getColumnNr();
    }

    private static String cut(String text) {
        return text.length() <= QUOTE_LIMIT ? text : text.substring(0, QUOTE_LIMIT) + "...";
    }
}
