package de.bwaldvogel.mongo.backend;

import java.util.List;
import java.util.stream.Stream;

import de.bwaldvogel.mongo.bson.Document;

/**
 * Linepack's access to package-private helpers of mongo-java-server's backend package (same package on the
 * class path), so what Linepack adds answers and counts exactly as the library's own code paths do.
 */
public final class LinepackBridge {

    private LinepackBridge() {
    }

    /** A document's BSON size, as the library computes it for its statistics. */
    public static int calculateSize(Document document) {
        return Utils.calculateSize(document);
    }

    /** The stored document at a position (null when removed meanwhile). */
    public static <P> Document document(AbstractMongoCollection<P> collection, P position) {
        return collection.getDocument(position);
    }

    /**
     * Matches, skips, limits and projects documents already in the requested order (comparator null), or sorts them
     * first ({@code orderBy}), exactly as the collection's own query path does with what it reads.
     */
    public static QueryResult matchDocuments(AbstractMongoCollection<?> collection, Stream<Document> documents, boolean inOrder,
                                             Document query, Document orderBy, int skip, int limit, int batchSize, Document fieldSelector) {
        return inOrder
            ? collection.matchDocumentsFromStream(query, documents, skip, limit, batchSize, null, fieldSelector)
            : collection.matchDocumentsFromStream(documents, query, orderBy, skip, limit, batchSize, fieldSelector);
    }

    /** The reply of a find/aggregate command whose results all fit in the first batch. */
    public static Document firstBatchCursorResponse(String namespace, List<Document> documents) {
        return Utils.firstBatchCursorResponse(namespace, documents);
    }
}
