package de.bwaldvogel.mongo.backend;

import java.util.List;

import de.bwaldvogel.mongo.bson.Document;

/**
 * Linepack's access to a package-private helper of mongo-java-server's backend package (same package on the
 * class path), so an aggregation planned by Linepack answers exactly as the library's own code path does.
 */
public final class LinepackBridge {

    private LinepackBridge() {
    }

    /** The reply of a find/aggregate command whose results all fit in the first batch. */
    public static Document firstBatchCursorResponse(String namespace, List<Document> documents) {
        return Utils.firstBatchCursorResponse(namespace, documents);
    }
}
