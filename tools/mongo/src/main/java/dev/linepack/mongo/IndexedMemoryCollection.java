package dev.linepack.mongo;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.Document;

/** mongo-java-server's in-memory collection, its queries planned by {@link QueryPlanner} (see {@link PlannedCollection}). */
final class IndexedMemoryCollection extends MemoryCollection implements IndexedCollection {

    private final PlannedCollection<Integer> planned = new PlannedCollection<>(this);

    IndexedMemoryCollection(MongoDatabase database, String collectionName, CollectionOptions options, CursorRegistry cursorRegistry) {
        super(database, collectionName, options, cursorRegistry);
    }

    @Override
    public PlannedCollection<Integer> planned() {
        return planned;
    }

    @Override
    protected synchronized QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                                      Document fieldSelector) {
        QueryResult planned = this.planned.query(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
        return planned != null ? planned : super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    /** The count command: from the index alone when it answers the filter exactly. */
    @Override
    public synchronized int count(Document query, int skip, int limit) {
        Long exact = planned.exactCount(query);
        return exact == null ? super.count(query, skip, limit) : QueryPlanner.window(exact, skip, limit);
    }
}
