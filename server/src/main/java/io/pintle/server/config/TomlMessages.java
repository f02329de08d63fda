package io.pintle.server.config;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.List;
import java.util.Map;

/**
 * The configuration's errors in the operator's words: what a key expects and what the file holds, as TOML writes
 * them, instead of the parser's class names and feature flags ({@code java.lang.Boolean}, {@code CoercionConfig}).
 */
final class TomlMessages {
    /** The TOML parser's syntax messages that read better said otherwise; the others are plain already. */
    private static final Map<String, String> SYNTAX = Map.of(
            "Table redefined", "a table is defined twice",
            "Premature end of file", "the file ends in the middle of a value",
            "Unknown token", "unexpected text (expected key = value, [table] or a comment)",
            "Newline not permitted here", "the line ends where a value was expected");
    /** Quoted values longer than this are cut: a message is one line. */
    private static final int QUOTE_LIMIT = 80;

    private TomlMessages() {}

    /** @return {@code " at line L, column C"} when the parser knows where, else empty */
    static String at(JacksonException e) {
        JsonLocation location = e.getLocation();
        if (location == null || location.getLineNr() < 1) {
            return "";
        }
        return " at line " + location.getLineNr() + (location.getColumnNr() > 0 ? ", column " + location.getColumnNr() : "");
    }

    /** @return a syntax error of the TOML parser, reworded where it helps */
    static String syntax(String original) {
        String message = original == null ? "" : original;
        return SYNTAX.getOrDefault(message, message);
    }

    /**
     * @param root the record the file is read into
     * @param path where the value is, as the mapping error gives it
     * @return what the key takes, in TOML terms ("a whole number", "true or false"...)
     */
    static String expected(Class<?> root, List<JsonMappingException.Reference> path) {
        Type type = root;
        for (JsonMappingException.Reference reference : path) {
            type = reference.getFieldName() != null ? member(type, reference.getFieldName()) : element(type);
            if (type == null) {
                return "a value of another type";
            }
        }
        return describe(type);
    }

    private static Type member(Type type, String name) {
        if (!(type instanceof Class<?> record) || !record.isRecord()) {
            return null;
        }
        for (RecordComponent component : record.getRecordComponents()) {
            // @JsonProperty does not target record components: Java puts it on the field (and parameter).
            JsonProperty property;
            try {
                property = record.getDeclaredField(component.getName()).getAnnotation(JsonProperty.class);
            } catch (NoSuchFieldException e) {
                property = null;
            }
            String key = property != null && !property.value().isEmpty() ? property.value() : component.getName();
            if (key.equals(name)) {
                return component.getGenericType();
            }
        }
        return null;
    }

    private static Type element(Type type) {
        return type instanceof ParameterizedType list && list.getRawType() == List.class
                ? list.getActualTypeArguments()[0]
                : null;
    }

    private static String describe(Type type) {
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type == Integer.class || type == int.class) {
            return "a whole number (at most " + Integer.MAX_VALUE + ")";
        }
        if (type == Long.class || type == long.class) {
            return "a whole number";
        }
        if (type == String.class) {
            return "a string in double quotes";
        }
        if (type instanceof ParameterizedType list && list.getRawType() == List.class) {
            return "a list of " + plural(list.getActualTypeArguments()[0]) + " in brackets";
        }
        if (type instanceof Class<?> record && record.isRecord()) {
            return "a table";
        }
        return "a value of another type";
    }

    private static String plural(Type type) {
        return type == String.class ? "strings" : "values";
    }

    /**
     * @param tree the file as read
     * @param path where the value is
     * @return the value as the file writes it (a string quoted, a number as is) or what it is (a list, a table)
     */
    static String found(JsonNode tree, List<JsonMappingException.Reference> path) {
        JsonNode node = tree;
        for (JsonMappingException.Reference reference : path) {
            node = reference.getFieldName() != null ? node.get(reference.getFieldName()) : node.get(reference.getIndex());
            if (node == null) {
                return "this value";
            }
        }
        if (node.isTextual()) {
            return "\"" + cut(node.textValue()) + "\"";
        }
        if (node.isFloatingPointNumber()) {
            double value = node.doubleValue();
            if (Double.isNaN(value)) {
                return "nan";
            }
            if (Double.isInfinite(value)) {
                return value > 0 ? "inf" : "-inf";
            }
            String text = node.isBigDecimal() ? node.decimalValue().toPlainString() : node.asText();
            // 2.0 is read as a decimal 2: shown with its point, so that the reader sees why it is refused.
            return cut(text.contains(".") ? text : text + ".0");
        }
        if (node.isNumber() || node.isBoolean()) {
            return cut(node.asText());
        }
        if (node.isArray()) {
            return "a list";
        }
        if (node.isObject()) {
            return "a table";
        }
        return "this value";
    }

    private static String cut(String text) {
        return text.length() <= QUOTE_LIMIT ? text : text.substring(0, QUOTE_LIMIT) + "...";
    }
}
