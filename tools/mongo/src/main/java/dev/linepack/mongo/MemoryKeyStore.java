package dev.linepack.mongo;

import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/** Index entries on the heap, for the in-memory server. */
final class MemoryKeyStore<P> implements KeyStore<P> {

    private final ConcurrentSkipListMap<String, P> entries = new ConcurrentSkipListMap<>();
    private volatile boolean multikey;
    private volatile boolean degraded;

    @Override
    public void put(String key, P position) {
        entries.put(key, position);
    }

    @Override
    public P remove(String key) {
        return entries.remove(key);
    }

    @Override
    public long size() {
        return entries.size();
    }

    @Override
    public Iterator<Map.Entry<String, P>> range(String from, String to, boolean descending) {
        if (from.compareTo(to) >= 0) {
            return java.util.Collections.emptyIterator();
        }
        NavigableMap<String, P> slice = entries.subMap(from, true, to, false);
        return (descending ? slice.descendingMap() : slice).entrySet().iterator();
    }

    @Override
    public long countRange(String from, String to) {
        // A skip list counts by walking: not worth it (reading a document by position costs the in-memory server little).
        return -1;
    }

    @Override
    public boolean isMultikey() {
        return multikey;
    }

    @Override
    public void markMultikey() {
        multikey = true;
    }

    @Override
    public boolean isDegraded() {
        return degraded;
    }

    @Override
    public void markDegraded() {
        degraded = true;
        entries.clear();
    }

    @Override
    public void drop() {
        entries.clear();
    }
}
