package dev.linepack.mongo;

import java.util.Iterator;
import java.util.Map;

/**
 * The sorted entries of one {@link OrderedIndex}: encoded key (values, then the document's _id) to document position.
 * One implementation keeps them on the JVM heap (the in-memory server of the tests), the other in H2 MVStore pages
 * next to the documents (the file-backed server of {@code npm start}), so a large index costs disk, not heap.
 */
interface KeyStore<P> {

    void put(String key, P position);

    /** The position stored under {@code key}, removed; null when there was none. */
    P remove(String key);

    long size();

    /** Entries with {@code from <= key < to}, ascending or descending. */
    Iterator<Map.Entry<String, P>> range(String from, String to, boolean descending);

    /**
     * How many entries lie in {@code from <= key < to}, or -1 when this store cannot tell without reading them (then
     * the planner does not weigh a range against a scan).
     */
    long countRange(String from, String to);

    /** Some document had several keys (an array value): positions can repeat and the key order is no sort order. */
    boolean isMultikey();

    void markMultikey();

    /** Some document had a value this index cannot order: the index is never used again (queries scan, as before). */
    boolean isDegraded();

    void markDegraded();

    void drop();
}
