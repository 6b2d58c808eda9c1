package dev.linepack.mongo;

import java.util.List;

import de.bwaldvogel.mongo.bson.Document;

/** What {@link IndexedCommands} asks of a collection that plans its queries with {@link QueryPlanner}. */
interface IndexedCollection {

    PlannedCollection<?> planned();

    /** The documents a {@code $match} filter can match (a superset), read through an index; null: read the collection. */
    default List<Document> candidates(Document match) {
        return planned().candidates(match);
    }

    /** How many documents match, counted from an index that answers the filter exactly; null when none does. */
    default Long exactCount(Document filter) {
        return planned().exactCount(filter);
    }

    /** MongoDB-shaped winningPlan of a count (COUNT_SCAN when the index alone answers it). */
    default Document explainCount(Document filter) {
        return planned().explainCount(filter);
    }

    /** MongoDB-shaped winningPlan of a find. */
    default Document explain(Document filter, Document sort, int limit) {
        return planned().explain(filter, sort, limit);
    }
}
