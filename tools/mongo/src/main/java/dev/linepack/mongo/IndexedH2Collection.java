package dev.linepack.mongo;

import org.h2.mvstore.MVMap;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.bson.Document;

/** mongo-java-server's H2 collection, its queries planned by {@link QueryPlanner} (see {@link PlannedCollection}). */
final class IndexedH2Collection extends H2Collection implements IndexedCollection {

    private final PlannedCollection<Object> planned = new PlannedCollection<>(this);

    IndexedH2Collection(MongoDatabase database, String collectionName, CollectionOptions options, MVMap<Object, Document> dataMap,
                        MVMap<String, Object> metaMap, CursorRegistry cursorRegistry) {
        super(database, collectionName, options, dataMap, metaMap, cursorRegistry);
    }

    @Override
    public PlannedCollection<Object> planned() {
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
