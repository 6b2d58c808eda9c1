package dev.linepack.mongo;

import java.util.List;

import de.bwaldvogel.mongo.bson.Document;

/** What {@link IndexedCommands} asks of a collection that plans its queries with {@link QueryPlanner}. */
interface IndexedCollection {

    /** The documents a {@code $match} filter can match (a superset), read through an index; null: read the collection. */
    List<Document> candidates(Document match);

    /** How many documents match, counted from an index that answers the filter exactly; null when none does. */
    Long exactCount(Document filter);

    /** MongoDB-shaped winningPlan of a count (COUNT_SCAN when the index alone answers it). */
    Document explainCount(Document filter);

    /** MongoDB-shaped winningPlan of a find. */
    Document explain(Document filter, Document sort, int limit);
}
