package de.bwaldvogel.mongo.backend;

import java.util.List;

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

    /** The reply of a find/aggregate command whose results all fit in the first batch. */
    public static Document firstBatchCursorResponse(String namespace, List<Document> documents) {
        return Utils.firstBatchCursorResponse(namespace, documents);
    }
}
