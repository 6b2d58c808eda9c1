package dev.linepack.mongo;

import java.util.AbstractMap;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;

import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.type.StringDataType;

/**
 * Index entries in MVStore maps of the database file: they are written, committed and fsynced with the documents by
 * {@link DurableH2Backend}, and read through MVStore's page cache, so the heap holds only the pages in use.
 */
final class H2KeyStore implements KeyStore<Object> {

    /** The name of an index's flags map after its entries map's: how its maps are recognised (DurableH2Backend). */
    static final String FLAGS_SUFFIX = ".flags";
    private static final String MULTIKEY = "multikey";
    private static final String DEGRADED = "degraded";

    private final MVStore store;
    private final String entriesName;
    private final String flagsName;
    private MVMap<String, Object> entries;
    private MVMap<String, Object> flags;

    H2KeyStore(MVStore store, String mapName) {
        this.store = store;
        this.entriesName = mapName;
        this.flagsName = mapName + FLAGS_SUFFIX;
        open();
    }

    private void open() {
        entries = store.openMap(entriesName, new MVMap.Builder<String, Object>().keyType(StringDataType.INSTANCE));
        flags = store.openMap(flagsName);
    }

    @Override
    public void put(String key, Object position) {
        entries.put(key, position);
    }

    @Override
    public Object remove(String key) {
        return entries.remove(key);
    }

    @Override
    public long size() {
        return entries.sizeAsLong();
    }

    @Override
    public Iterator<Map.Entry<String, Object>> range(String from, String to, boolean descending) {
        if (from.compareTo(to) >= 0) {
            return Collections.emptyIterator();
        }
        String start = descending ? entries.lowerKey(to) : entries.ceilingKey(from);
        if (start == null || start.compareTo(from) < 0 || start.compareTo(to) >= 0) {
            return Collections.emptyIterator();
        }
        Cursor<String, Object> cursor = entries.cursor(start, null, descending);
        return new Iterator<>() {
            private Map.Entry<String, Object> next = advance();

            private Map.Entry<String, Object> advance() {
                if (!cursor.hasNext()) {
                    return null;
                }
                String key = cursor.next();
                boolean inside = descending ? key.compareTo(from) >= 0 : key.compareTo(to) < 0;
                return inside ? new AbstractMap.SimpleImmutableEntry<>(key, cursor.getValue()) : null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public Map.Entry<String, Object> next() {
                if (next == null) {
                    throw new NoSuchElementException();
                }
                Map.Entry<String, Object> current = next;
                next = advance();
                return current;
            }
        };
    }

    @Override
    public long countRange(String from, String to) {
        return from.compareTo(to) >= 0 ? 0 : rank(to) - rank(from);
    }

    /** How many keys are below {@code key}: MVMap counts them from its page counts, without reading the entries. */
    private long rank(String key) {
        long index = entries.getKeyIndex(key);
        return index >= 0 ? index : -(index + 1);
    }

    @Override
    public boolean isMultikey() {
        return flags.containsKey(MULTIKEY);
    }

    @Override
    public void markMultikey() {
        if (!isMultikey()) {
            flags.put(MULTIKEY, Boolean.TRUE);
        }
    }

    @Override
    public boolean isDegraded() {
        return flags.containsKey(DEGRADED);
    }

    @Override
    public void markDegraded() {
        flags.put(DEGRADED, Boolean.TRUE);
        entries.clear();
    }

    @Override
    public void drop() {
        store.removeMap(entriesName);
        store.removeMap(flagsName);
        open();
    }
}
