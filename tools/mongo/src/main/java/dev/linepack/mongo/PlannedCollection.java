package dev.linepack.mongo;

import java.util.List;
import java.util.stream.Collectors;

import de.bwaldvogel.mongo.backend.AbstractMongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.LinepackBridge;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.bson.Document;

/**
 * What the in-memory and the H2 collection share: their queries, counts, aggregation candidates and plans through
 * {@link QueryPlanner}. Each collection keeps only the overrides that must call its superclass (Java has one). Every
 * method holds the collection's monitor, as its own synchronized methods do.
 */
final class PlannedCollection<P> implements QueryPlanner.Host<P> {

    private final AbstractMongoCollection<P> collection;

    PlannedCollection(AbstractMongoCollection<P> collection) {
        this.collection = collection;
    }

    @Override
    public List<Index<P>> indexes() {
        return collection.getIndexes();
    }

    @Override
    public Document document(P position) {
        return LinepackBridge.document(collection, position);
    }

    @Override
    public long size() {
        return collection.count();
    }

    /** The answer of a planned query; null when the collection's own path should answer. */
    QueryResult query(Document query, Document orderBy, int skip, int limit, int batchSize, Document fieldSelector) {
        synchronized (collection) {
            QueryPlanner.Candidates candidates = QueryPlanner.plan(this, query, orderBy, limit);
            if (candidates == null) {
                return null;
            }
            Document filter = candidates.residual() != null ? candidates.residual() : query;
            return LinepackBridge.matchDocuments(collection, candidates.documents(), candidates.ordered(), filter, orderBy, skip, limit,
                batchSize, fieldSelector);
        }
    }

    List<Document> candidates(Document match) {
        synchronized (collection) {
            QueryPlanner.Candidates candidates = QueryPlanner.plan(this, match, null, 0);
            return candidates == null ? null : candidates.documents().collect(Collectors.toList());
        }
    }

    Long exactCount(Document filter) {
        synchronized (collection) {
            return QueryPlanner.exactCount(this, filter);
        }
    }

    Document explainCount(Document filter) {
        synchronized (collection) {
            Document exact = QueryPlanner.explainCount(this, filter);
            return exact != null ? exact : QueryPlanner.explain(this, filter, null, 0);
        }
    }

    Document explain(Document filter, Document sort, int limit) {
        synchronized (collection) {
            return QueryPlanner.explain(this, filter, sort, limit);
        }
    }
}
