package dev.linepack.mongo;

import java.util.List;
import java.util.stream.Collectors;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.Document;

/** mongo-java-server's in-memory collection, its queries planned by {@link QueryPlanner}. */
final class IndexedMemoryCollection extends MemoryCollection implements IndexedCollection {

    private final QueryPlanner.Host<Integer> host = new QueryPlanner.Host<>() {
        @Override
        public List<Index<Integer>> indexes() {
            return getIndexes();
        }

        @Override
        public Document document(Integer position) {
            return getDocument(position);
        }

        @Override
        public long size() {
            return count();
        }
    };

    IndexedMemoryCollection(MongoDatabase database, String collectionName, CollectionOptions options, CursorRegistry cursorRegistry) {
        super(database, collectionName, options, cursorRegistry);
    }

    @Override
    protected synchronized QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                                      Document fieldSelector) {
        QueryPlanner.Candidates candidates = QueryPlanner.plan(host, query, orderBy, limit);
        if (candidates == null) {
            return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
        }
        return candidates.ordered()
            ? matchDocumentsFromStream(query, candidates.documents(), numberToSkip, limit, batchSize, null, fieldSelector)
            : matchDocumentsFromStream(candidates.documents(), query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    @Override
    public synchronized List<Document> candidates(Document match) {
        QueryPlanner.Candidates candidates = QueryPlanner.plan(host, match, null, 0);
        return candidates == null ? null : candidates.documents().collect(Collectors.toList());
    }

    @Override
    public synchronized Long exactCount(Document filter) {
        return QueryPlanner.exactCount(host, filter);
    }

    @Override
    public synchronized Document explainCount(Document filter) {
        Document exact = QueryPlanner.explainCount(host, filter);
        return exact != null ? exact : QueryPlanner.explain(host, filter, null, 0);
    }

    /** The count command: from the index alone when it answers the filter exactly. */
    @Override
    public synchronized int count(Document query, int skip, int limit) {
        Long exact = exactCount(query);
        return exact == null ? super.count(query, skip, limit) : QueryPlanner.window(exact, skip, limit);
    }

    @Override
    public synchronized Document explain(Document filter, Document sort, int limit) {
        return QueryPlanner.explain(host, filter, sort, limit);
    }
}
