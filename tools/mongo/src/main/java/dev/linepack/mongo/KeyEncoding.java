package dev.linepack.mongo;

import java.time.Instant;
import java.util.UUID;

import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.MaxKey;
import de.bwaldvogel.mongo.bson.MinKey;
import de.bwaldvogel.mongo.bson.ObjectId;

/**
 * Encodes index key values as strings whose {@link String#compareTo} order is the order mongo-java-server sorts the
 * values in (its {@code ValueComparator}: BSON type order first, then the value), so that a plain sorted map of
 * strings serves equality prefixes, ranges and sorts, in memory and in H2 alike.
 *
 * <p>Every encoding is prefix-free: a type tag, then either a fixed-length payload (numbers, dates, booleans,
 * object ids) or a string payload ended by {@code \u0000} (the characters 0 and 1 are escaped so the terminator sorts
 * below any character). So the concatenation of a key's encoded values sorts like the tuple of values, a key starts
 * with an encoded prefix exactly when its leading values equal the prefix's, and {@link #AFTER} appended to an
 * encoded prefix is greater than every key extending it. A descending key part is the ascending encoding with every
 * character complemented, which reverses its order and keeps it prefix-free.
 */
final class KeyEncoding {

    /** Greater than the first character of any encoded value (type tags are below {@code \uFFF0} and above {@code \u000F}). */
    static final char AFTER = '\uFFFF';

    /** Integers beyond 2^53 have no exact double. */
    private static final long MAX_EXACT_DOUBLE = 1L << 53;

    private static final char MIN_KEY = 0x10;
    private static final char NULL = 0x11;
    private static final char NUMBER = 0x12;
    private static final char STRING = 0x13;
    private static final char UUID_TAG = 0x17;
    private static final char OBJECT_ID = 0x18;
    private static final char BOOLEAN = 0x19;
    private static final char DATE = 0x1a;
    private static final char TIMESTAMP = 0x1b;
    private static final char MAX_KEY = 0x1f;

    private KeyEncoding() {
    }

    /** The encoding of {@code value}, or null when this index cannot order such a value (documents, binary, regex...). */
    static String encode(Object value, boolean ascending) {
        StringBuilder sb = new StringBuilder(24);
        if (!append(sb, value)) {
            return null;
        }
        if (!ascending) {
            for (int i = 0; i < sb.length(); i++) {
                sb.setCharAt(i, (char) (0xFFFF - sb.charAt(i)));
            }
        }
        return sb.toString();
    }

    private static boolean append(StringBuilder sb, Object value) {
        if (value == null || value instanceof Missing) {
            sb.append(NULL);
        } else if (value instanceof MinKey) {
            sb.append(MIN_KEY);
        } else if (value instanceof MaxKey) {
            sb.append(MAX_KEY);
        } else if (value instanceof Long l && Math.abs(l) > MAX_EXACT_DOUBLE) {
            // Encoded through a double it would tie with its neighbours: not orderable here (a query on it scans).
            return false;
        } else if (value instanceof Integer || value instanceof Long || value instanceof Double || value instanceof Float
            || value instanceof Short || value instanceof Byte) {
            sb.append(NUMBER);
            appendNumber(sb, ((Number) value).doubleValue());
        } else if (value instanceof String s) {
            sb.append(STRING);
            appendString(sb, s);
        } else if (value instanceof UUID u) {
            // mongo-java-server orders UUIDs by their string form.
            sb.append(UUID_TAG);
            appendString(sb, u.toString());
        } else if (value instanceof ObjectId o) {
            sb.append(OBJECT_ID).append(o.getHexData());
        } else if (value instanceof Boolean b) {
            sb.append(BOOLEAN).append(b ? '1' : '0');
        } else if (value instanceof Instant i) {
            sb.append(DATE);
            appendLong(sb, i.toEpochMilli());
        } else if (value instanceof BsonTimestamp t) {
            sb.append(TIMESTAMP);
            appendLong(sb, t.getValue());
        } else {
            return false;
        }
        return true;
    }

    /** Sixteen hex digits that sort like the double (NaN first, as MongoDB orders it; -0.0 equal to 0.0). */
    private static void appendNumber(StringBuilder sb, double d) {
        if (Double.isNaN(d)) {
            sb.append("0000000000000000");
            return;
        }
        long bits = Double.doubleToLongBits(d == 0.0 ? 0.0 : d);
        appendHex(sb, bits < 0 ? ~bits : bits ^ Long.MIN_VALUE);
    }

    private static void appendLong(StringBuilder sb, long v) {
        appendHex(sb, v ^ Long.MIN_VALUE);
    }

    private static void appendHex(StringBuilder sb, long unsigned) {
        String hex = Long.toHexString(unsigned);
        for (int i = hex.length(); i < 16; i++) {
            sb.append('0');
        }
        sb.append(hex);
    }

    private static void appendString(StringBuilder sb, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c <= 1) {
                sb.append('\u0001').append((char) (c + 1));
            } else {
                sb.append(c);
            }
        }
        sb.append('\u0000');
    }
}
