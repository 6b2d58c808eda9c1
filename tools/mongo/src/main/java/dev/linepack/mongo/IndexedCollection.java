package dev.linepack.mongo;

import java.util.List;

import de.bwaldvogel.mongo.bson.Document;

/** What {@link IndexedCommands} asks of a collection that plans its queries with {@link QueryPlanner}. */
interface IndexedCollection {

    /** The documents a {@code $match} filter can match (a superset), read through an index; null: read the collection. */
    List<Document> candidates(Document match);

    /** MongoDB-shaped winningPlan of a find. */
    Document explain(Document filter, Document sort, int limit);
}
