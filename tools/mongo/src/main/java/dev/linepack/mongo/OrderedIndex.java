package dev.linepack.mongo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.KeyConstraintError;

/**
 * A non-unique (or sparse) index kept sorted, where mongo-java-server keeps none ({@code EmptyIndex}: every query
 * that is not on {@code _id} or a whole unique key scans the collection). One entry per document and key value:
 * the encoded values ({@link KeyEncoding}) followed by the encoded {@code _id}, so entries are distinct and removable
 * from the document alone. {@link QueryPlanner} reads it; the collection's own query path never does
 * ({@link #canHandle} is false), so mongo-java-server's planning is unchanged where this index is not chosen.
 */
final class OrderedIndex<P> extends Index<P> {

    private final KeyStore<P> store;
    private final boolean[] ascending;
    private final boolean declaredSparse;
    /** The top-level fields its key paths start in, and _id (every entry ends in it). */
    private final String[] topLevelFields;

    OrderedIndex(String name, List<IndexKey> keys, boolean sparse, KeyStore<P> store) {
        super(name, keys, sparse);
        this.store = store;
        this.declaredSparse = sparse;
        this.topLevelFields = IndexedFields.of(keys);
        this.ascending = new boolean[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            ascending[i] = keys.get(i).isAscending();
        }
    }

    boolean isAscending(int keyIndex) {
        return ascending[keyIndex];
    }

    boolean isUsable() {
        return !store.isDegraded();
    }

    boolean isMultikey() {
        return store.isMultikey();
    }

    boolean isDeclaredSparse() {
        return declaredSparse;
    }

    KeyStore<P> store() {
        return store;
    }

    /**
     * Removing a document asks every index for its position and fails on a non-sparse index that has none; once
     * degraded this index holds nothing, so it answers like a sparse one.
     */
    @Override
    protected boolean isSparse() {
        return declaredSparse || store.isDegraded();
    }

    /** The entry keys of a document; empty when a sparse index leaves it out; null when its values cannot be ordered. */
    private List<String> entryKeys(Document document) {
        if (declaredSparse && getKeys().stream().allMatch(k -> isMissing(Utils.getSubdocumentValueCollectionAware(document, k.getKey())))) {
            return List.of();
        }
        String id = KeyEncoding.encode(document.get("_id"), true);
        if (id == null) {
            return null;
        }
        Set<KeyValue> values;
        try {
            values = getKeyValues(document);
        } catch (RuntimeException e) {
            // Parallel arrays and the like: MongoDB refuses such a document; mongo-java-server never indexed it. Keep it stored.
            return null;
        }
        if (values.isEmpty()) {
            return declaredSparse ? List.of() : null;
        }
        List<String> keys = new ArrayList<>(values.size());
        for (KeyValue value : values) {
            StringBuilder key = new StringBuilder();
            for (int i = 0; i < value.size(); i++) {
                String part = KeyEncoding.encode(value.get(i), ascending[i]);
                if (part == null) {
                    return null;
                }
                key.append(part);
            }
            keys.add(key.append(id).toString());
        }
        if (keys.size() > 1 || values.stream().anyMatch(v -> v.stream().anyMatch(x -> x instanceof Collection<?>))) {
            store.markMultikey();
        }
        return keys;
    }

    /**
     * A sparse index leaves out documents without the field. Unlike mongo-java-server's own check (which finds no
     * value below an array), a path through an array has a value when one of its elements does, as in MongoDB.
     */
    private static boolean isMissing(Object value) {
        if (value instanceof Collection<?> values) {
            return values.stream().allMatch(OrderedIndex::isMissing);
        }
        return value instanceof Missing;
    }

    @Override
    public P getPosition(Document document) {
        // The _id index answers this for the collection.
        return null;
    }

    @Override
    public void checkAdd(Document document, MongoCollection<P> collection) {
        // Not unique: nothing to refuse.
    }

    @Override
    public synchronized void add(Document document, P position, MongoCollection<P> collection) {
        if (store.isDegraded()) {
            return;
        }
        List<String> keys = entryKeys(document);
        if (keys == null) {
            store.markDegraded();
            return;
        }
        for (String key : keys) {
            store.put(key, position);
        }
    }

    @Override
    public synchronized P remove(Document document) {
        if (store.isDegraded()) {
            return null;
        }
        List<String> keys = entryKeys(document);
        if (keys == null) {
            store.markDegraded();
            return null;
        }
        P position = null;
        for (String key : keys) {
            P removed = store.remove(key);
            if (removed != null) {
                position = removed;
            }
        }
        return position;
    }

    @Override
    public boolean canHandle(Document query) {
        return false;
    }

    @Override
    public Iterable<P> getPositions(Document query) {
        throw new UnsupportedOperationException("read through QueryPlanner");
    }

    @Override
    public long getCount() {
        return store.size();
    }

    @Override
    public boolean isEmpty() {
        return store.size() == 0;
    }

    @Override
    public long getDataSize() {
        return store.size();
    }

    @Override
    public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<P> collection) {
        // Not unique: nothing to refuse.
    }

    @Override
    public synchronized void updateInPlace(Document oldDocument, Document newDocument, P position, MongoCollection<P> collection)
        throws KeyConstraintError {
        if (store.isDegraded()) {
            return;
        }
        if (IndexedFields.unchanged(topLevelFields, oldDocument, newDocument)) {
            return;
        }
        List<String> before = entryKeys(oldDocument);
        List<String> after = entryKeys(newDocument);
        if (before == null || after == null) {
            store.markDegraded();
            return;
        }
        if (before.equals(after)) {
            return;
        }
        for (String key : before) {
            if (!after.contains(key)) {
                store.remove(key);
            }
        }
        for (String key : after) {
            store.put(key, position);
        }
    }

    @Override
    public void drop() {
        store.drop();
    }
}
