package dev.linepack.mongo;

import java.util.List;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.AbstractMongoDatabase;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.LinepackBridge;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;

/**
 * The two commands an indexed database answers itself before mongo-java-server's own handling:
 * <ul>
 * <li>{@code aggregate} whose first stage is {@code $match}: the pipeline runs over the documents an index yields
 * for that filter instead of the whole collection (the library streams every document into every aggregation);</li>
 * <li>{@code explain} of find, count and aggregate: the plan {@link QueryPlanner} chose, shaped like MongoDB's
 * {@code queryPlanner.winningPlan}, so tests can assert the same plans on both servers.</li>
 * </ul>
 * Anything else, and any failure, goes to the library's path, which answers or reports it as it always has.
 */
final class IndexedCommands {

    private IndexedCommands() {
    }

    static Document handle(AbstractMongoDatabase<?> database, String command, Document query, DatabaseResolver resolver, Oplog oplog) {
        if (command.equalsIgnoreCase("aggregate")) {
            if (Boolean.TRUE.equals(query.get("explain"))) {
                return explain(database, query);
            }
            return aggregate(database, query, resolver, oplog);
        }
        if (command.equalsIgnoreCase("explain") && query.get("explain") instanceof Document inner) {
            return explain(database, inner);
        }
        return null;
    }

    private static Document aggregate(AbstractMongoDatabase<?> database, Document query, DatabaseResolver resolver, Oplog oplog) {
        if (!(query.get("aggregate") instanceof String collectionName) || !(query.get("pipeline") instanceof List<?>)) {
            return null;
        }
        List<Document> pipeline;
        try {
            pipeline = Aggregation.parse(query.get("pipeline"));
        } catch (RuntimeException e) {
            return null;
        }
        Document match = firstMatch(pipeline);
        if (match == null) {
            return null;
        }
        for (Document stage : pipeline) {
            if (stage.containsKey("$out") || stage.containsKey("$merge") || stage.containsKey("$changeStream")) {
                return null;
            }
        }
        MongoCollection<?> collection = database.resolveCollection(collectionName, false);
        if (!(collection instanceof IndexedCollection indexed)) {
            return null;
        }
        Document counted = countDocuments(indexed, pipeline, database.getDatabaseName() + "." + collectionName);
        if (counted != null) {
            return counted;
        }
        List<Document> candidates = indexed.candidates(match);
        if (candidates == null) {
            return null;
        }
        try {
            Aggregation aggregation = Aggregation.fromPipeline(pipeline, resolver, database, collection, oplog);
            aggregation.validate(query);
            // The pipeline's own $match still filters: the candidates are only the documents it could keep.
            return LinepackBridge.firstBatchCursorResponse(database.getDatabaseName() + "." + collectionName,
                aggregation.runStages(candidates.stream()));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * The driver's countDocuments, {@code [{$match}, {$group: {_id: <constant>, n: {$sum: 1}}}]}, answered from an index
     * that matches the filter exactly, without reading a document; null when it is not that shape or no index does.
     */
    private static Document countDocuments(IndexedCollection collection, List<Document> pipeline, String namespace) {
        String name = pipeline.size() == 2 ? countGroup(pipeline.get(1)) : null;
        if (name == null) {
            return null;
        }
        Long count = collection.exactCount(firstMatch(pipeline));
        if (count == null) {
            return null;
        }
        Object id = ((Document) pipeline.get(1).get("$group")).get("_id");
        // No document in: no group out, as $group answers an empty input.
        List<Document> result = count == 0 ? List.of()
            : List.of(new Document("_id", id).append(name, count <= Integer.MAX_VALUE ? (Object) count.intValue() : count));
        return LinepackBridge.firstBatchCursorResponse(namespace, result);
    }

    /** Whether an aggregate command is the driver's countDocuments shape (see countDocuments). */
    private static boolean countsOnly(Document aggregate) {
        if (!(aggregate.get("pipeline") instanceof List<?>)) {
            return false;
        }
        List<Document> pipeline = Aggregation.parse(aggregate.get("pipeline"));
        return pipeline.size() == 2 && firstMatch(pipeline) != null && countGroup(pipeline.get(1)) != null;
    }

    /** The accumulator name of {@code {$group: {_id: <constant>, <name>: {$sum: 1}}}}; null for any other stage. */
    private static String countGroup(Document stage) {
        if (!(stage.get("$group") instanceof Document group) || stage.size() != 1 || group.size() != 2 || !group.containsKey("_id")
            || group.get("_id") instanceof String || group.get("_id") instanceof Document || group.get("_id") instanceof java.util.Collection<?>) {
            return null;
        }
        String name = group.keySet().stream().filter(k -> !k.equals("_id")).findFirst().orElseThrow();
        if (!(group.get(name) instanceof Document sum) || sum.size() != 1 || !(sum.get("$sum") instanceof Number one) || one.doubleValue() != 1) {
            return null;
        }
        return name;
    }

    private static Document firstMatch(List<Document> pipeline) {
        if (pipeline.isEmpty() || pipeline.get(0).size() != 1 || !(pipeline.get(0).get("$match") instanceof Document match)) {
            return null;
        }
        return match;
    }

    private static Document explain(AbstractMongoDatabase<?> database, Document inner) {
        String verb = inner.isEmpty() ? "" : inner.keySet().iterator().next();
        if (!(inner.get(verb) instanceof String collectionName)) {
            return null;
        }
        Document filter;
        Document sort = null;
        int limit = 0;
        switch (verb.toLowerCase(java.util.Locale.ROOT)) {
            case "find" -> {
                filter = inner.get("filter") instanceof Document f ? f : new Document();
                sort = inner.get("sort") instanceof Document s ? s : null;
                limit = inner.get("limit") instanceof Number n ? Math.abs(n.intValue()) : 0;
            }
            case "count" -> filter = inner.get("query") instanceof Document q ? q : new Document();
            case "aggregate" -> {
                List<Document> pipeline = inner.get("pipeline") instanceof List<?> ? Aggregation.parse(inner.get("pipeline")) : List.of();
                Document match = firstMatch(pipeline);
                filter = match != null ? match : new Document();
            }
            default -> {
                return null;
            }
        }
        String namespace = database.getDatabaseName() + "." + collectionName;
        MongoCollection<?> collection = database.resolveCollection(collectionName, false);
        boolean counting = verb.equalsIgnoreCase("count") || verb.equalsIgnoreCase("aggregate") && countsOnly(inner);
        Document winningPlan = !(collection instanceof IndexedCollection indexed) ? new Document("stage", collection == null ? "EOF" : "COLLSCAN")
            : counting ? indexed.explainCount(filter) : indexed.explain(filter, sort, limit);
        Document planner = new Document("namespace", namespace).append("indexFilterSet", false).append("parsedQuery", filter)
            .append("winningPlan", winningPlan).append("rejectedPlans", List.of());
        return new Document("queryPlanner", planner).append("ok", 1.0);
    }
}
