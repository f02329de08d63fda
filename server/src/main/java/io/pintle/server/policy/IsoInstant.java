package io.pintle.server.policy;

import java.time.Instant;
import java.time.LocalDate;

/**
 * {@link Instant#toString()}'s form ({@code DateTimeFormatter.ISO_INSTANT}: {@code 2026-12-07T19:58:01.123Z}, the
 * fraction in groups of three digits, none when whole), written directly for the years 1970 to 9999: every entry of
 * a manifest carries one, and the JDK's formatter builds a print context and a string builder per call (about a
 * twentieth of a tree walk's CPU). Other instants go to the JDK. The wire form is the JDK's; {@code
 * IsoInstantTest} holds this to it.
 */
final class IsoInstant {
    /** 9999-12-31T23:59:59Z: the last second written with a four-digit year. */
    static final long LAST_FOUR_DIGIT_SECOND = 253_402_300_799L;

    private static final int SECONDS_PER_DAY = 86_400;

    private IsoInstant() {}

    static String format(Instant instant) {
        long seconds = instant.getEpochSecond();
        if (seconds < 0 || seconds > LAST_FOUR_DIGIT_SECOND) {
            return instant.toString();
        }
        LocalDate date = LocalDate.ofEpochDay(seconds / SECONDS_PER_DAY);
        int ofDay = (int) (seconds % SECONDS_PER_DAY);
        int nano = instant.getNano();
        char[] out = new char[30];
        digits(out, 0, date.getYear(), 4);
        out[4] = '-';
        digits(out, 5, date.getMonthValue(), 2);
        out[7] = '-';
        digits(out, 8, date.getDayOfMonth(), 2);
        out[10] = 'T';
        digits(out, 11, ofDay / 3600, 2);
        out[13] = ':';
        digits(out, 14, ofDay / 60 % 60, 2);
        out[16] = ':';
        digits(out, 17, ofDay % 60, 2);
        int length = 19;
        if (nano > 0) {
            out[length++] = '.';
            if (nano % 1_000_000 == 0) {
                digits(out, length, nano / 1_000_000, 3);
                length += 3;
            } else if (nano % 1_000 == 0) {
                digits(out, length, nano / 1_000, 6);
                length += 6;
            } else {
                digits(out, length, nano, 9);
                length += 9;
            }
        }
        out[length++] = 'Z';
        return new String(out, 0, length);
    }

    /** Writes {@code value} as {@code count} decimal digits, zero-padded, from {@code at}. */
    private static void digits(char[] out, int at, int value, int count) {
        for (int i = at + count - 1; i >= at; i--) {
            out[i] = (char) ('0' + value % 10);
            value /= 10;
        }
    }
}
