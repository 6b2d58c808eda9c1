package dev.linepack.mongo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;

/**
 * Chooses how a query reads a collection, where mongo-java-server itself only ever uses the {@code _id} index for a
 * filter that is exactly {@code {_id}} and a unique index for an exact match of all its fields:
 * <ol>
 * <li>{@code _id} equality or {@code $in} anywhere in the filter: the _id index (as MongoDB does for
 * {@code {_id, tenantId}});</li>
 * <li>a filter mongo-java-server's own indexes handle: left to it;</li>
 * <li>otherwise the {@link OrderedIndex} with the longest equality prefix (equalities and {@code $in} on its leading
 * keys, from the filter's top level and its {@code $and}), a range ({@code $gt/$gte/$lt/$lte}) on the next key, and,
 * when its remaining keys are the sort, read in that order and stopped at the limit;</li>
 * <li>no usable index: a collection scan, as before.</li>
 * </ol>
 * Every document an index yields is still tested against the whole filter by the server's own matcher, so bounds only
 * ever narrow what is read: a plan changes how long a query takes, never what it answers.
 */
final class QueryPlanner {

    /** A plan whose $in lists multiply to more prefixes than this stops extending its equality prefix. */
    private static final int MAX_PREFIXES = 1_000;

    /** What a collection lends the planner. */
    interface Host<P> {
        List<Index<P>> indexes();

        /** The stored document at a position; null when it was removed meanwhile. */
        Document document(P position);

        /** Documents in the collection. */
        long size();
    }

    /**
     * The documents a plan reads (a superset of the matches), whether they come in the requested order, and what is left
     * of the filter to test them against: null for the whole filter.
     */
    record Candidates(Stream<Document> documents, boolean ordered, Document explain, Document residual) {
        Candidates(Stream<Document> documents, boolean ordered, Document explain) {
            this(documents, ordered, explain, null);
        }
    }

    /**
     * @param ranges   {from, to} per equality prefix ($in values multiply them), in key order of their prefixes
     * @param prefixes the equality prefix of each range (its keys continue with the next index keys)
     * @param ordered  reading yields the sort: one range in index order, or several merged by what follows the prefix
     */
    private record Choice<P>(OrderedIndex<P> index, List<String[]> ranges, List<String> prefixes, boolean ordered,
                             boolean descending, int equalities, boolean ranged, boolean exact) {

        int score(boolean sorted) {
            return equalities * 4 + (ranged ? 2 : 0) + (sorted && ordered ? 3 : 0);
        }
    }

    private QueryPlanner() {
    }

    /**
     * Null when the query is left to mongo-java-server's own path (no filter, a natural-order sort, its indexes, none
     * usable, or an index range holding so much of the collection that reading the documents in key order would cost
     * more than scanning them in file order).
     */
    static <P> Candidates plan(Host<P> host, Document query, Document orderBy, int limit) {
        if (query == null || query.isEmpty() || (orderBy != null && orderBy.containsKey("$natural"))) {
            return null;
        }
        Map<String, List<Object>> conditions = conditions(query);
        Candidates byId = byId(host, conditions);
        if (byId != null) {
            return withoutIdCondition(byId, query, conditions);
        }
        for (Index<P> index : host.indexes()) {
            if (!(index instanceof OrderedIndex) && index.canHandle(query)) {
                return null;
            }
        }
        boolean sorted = orderBy != null && !orderBy.isEmpty();
        Choice<P> best = best(host, conditions, orderBy, sorted);
        if (best == null) {
            return null;
        }
        // An ordered read stopped at a limit touches only what it returns; any other read touches the whole range.
        boolean stopsEarly = best.ordered() && limit > 0;
        if (!stopsEarly && scanIsCheaper(host, best)) {
            return null;
        }
        return new Candidates(read(host, best), best.ordered(), explainIndex(best, sorted));
    }

    private static <P> Choice<P> best(Host<P> host, Map<String, List<Object>> conditions, Document orderBy, boolean sorted) {
        Choice<P> best = null;
        for (Index<P> index : host.indexes()) {
            if (index instanceof OrderedIndex<P> ordered && ordered.isUsable()) {
                Choice<P> choice = choose(ordered, conditions, orderBy);
                if (choice != null && (best == null || choice.score(sorted) > best.score(sorted))) {
                    best = choice;
                }
            }
        }
        return best;
    }

    /**
     * A document read through an index is a lookup by key in the file (a B-tree descent, a page decoded for one
     * document); a scan reads the pages in order, every document of a page at once. Past a third of the collection
     * the scan is cheaper. Only the H2 store counts a range without reading it; in memory a lookup costs little.
     */
    private static <P> boolean scanIsCheaper(Host<P> host, Choice<P> choice) {
        long inRange = 0;
        for (String[] range : choice.ranges()) {
            long n = choice.index().store().countRange(range[0], range[1]);
            if (n < 0) {
                return false;
            }
            inRange += n;
        }
        return inRange * 3 > host.size();
    }

    /**
     * The number of documents matching {@code query} when an index answers it exactly (every condition is an equality
     * on the index's leading keys or a range with both ends on the next one, and no document has an array there): the
     * entries in its ranges, counted without reading a document. Null otherwise.
     */
    static <P> Long exactCount(Host<P> host, Document query) {
        Choice<P> exact = exactChoice(host, query);
        if (exact == null) {
            return null;
        }
        long count = 0;
        for (String[] range : exact.ranges()) {
            long n = exact.index().store().countRange(range[0], range[1]);
            if (n < 0) {
                Iterator<Map.Entry<String, P>> entries = exact.index().store().range(range[0], range[1], false);
                for (n = 0; entries.hasNext(); n++) {
                    entries.next();
                }
            }
            count += n;
        }
        return count;
    }

    /** The plan of a count as MongoDB explains one it answers from an index alone (COUNT_SCAN); null otherwise. */
    static <P> Document explainCount(Host<P> host, Document query) {
        Choice<P> exact = exactChoice(host, query);
        if (exact == null) {
            return null;
        }
        Document scan = ixscan(exact.index(), "forward").append("stage", "COUNT_SCAN");
        return new Document("stage", "COUNT").append("inputStage", scan);
    }

    private static <P> Choice<P> exactChoice(Host<P> host, Document query) {
        if (query == null || query.isEmpty() || !onlyFieldConditions(query)) {
            return null;
        }
        Map<String, List<Object>> conditions = conditions(query);
        if (conditions.containsKey("_id")) {
            return null;
        }
        for (Index<P> index : host.indexes()) {
            if (!(index instanceof OrderedIndex) && index.canHandle(query)) {
                return null;
            }
        }
        Choice<P> best = null;
        for (Index<P> index : host.indexes()) {
            if (index instanceof OrderedIndex<P> ordered && ordered.isUsable() && !ordered.isMultikey() && !ordered.isDeclaredSparse()) {
                Choice<P> choice = choose(ordered, conditions, null);
                if (choice != null && choice.exact() && (best == null || choice.score(false) > best.score(false))) {
                    best = choice;
                }
            }
        }
        return best;
    }

    /** A count after skip and limit (0: none), as the count command applies them. */
    static int window(long count, int skip, int limit) {
        long n = Math.max(0, count - Math.max(0, skip));
        return (int) Math.min(limit > 0 ? Math.min(n, limit) : n, Integer.MAX_VALUE);
    }

    /** A filter of field conditions only, at its top level and in $and conjuncts ($or, $nor, $expr and the like need documents). */
    private static boolean onlyFieldConditions(Document query) {
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            if (entry.getKey().equals("$and")) {
                if (!(entry.getValue() instanceof Collection<?> conjuncts)) {
                    return false;
                }
                for (Object conjunct : conjuncts) {
                    if (!(conjunct instanceof Document d) || !onlyFieldConditions(d)) {
                        return false;
                    }
                }
            } else if (entry.getKey().startsWith("$")) {
                return false;
            }
        }
        return true;
    }

    /** Describes the plan of a find as MongoDB's explain does (winningPlan), for this server's tests and users. */
    static <P> Document explain(Host<P> host, Document query, Document orderBy, int limit) {
        boolean sorted = orderBy != null && !orderBy.isEmpty();
        Candidates candidates = plan(host, query, orderBy, limit);
        Document plan;
        boolean ordered;
        if (candidates != null) {
            candidates.documents().close();
            plan = candidates.explain();
            ordered = candidates.ordered();
        } else {
            Index<P> own = query == null || query.isEmpty() ? null
                : host.indexes().stream().filter(i -> !(i instanceof OrderedIndex) && i.canHandle(query)).findFirst().orElse(null);
            plan = own == null ? new Document("stage", "COLLSCAN") : fetch(ixscan(own, "forward"));
            ordered = false;
        }
        if (sorted && !ordered) {
            plan = new Document("stage", "SORT").append("sortPattern", orderBy).append("inputStage", plan);
        }
        if (limit > 0) {
            plan = new Document("stage", "LIMIT").append("limitAmount", limit).append("inputStage", plan);
        }
        return plan;
    }

    /**
     * Every condition on each field, from the filter's top level and its {@code $and} conjuncts (each one a valid
     * restriction on its own: a document must meet them all).
     */
    private static Map<String, List<Object>> conditions(Document query) {
        Map<String, List<Object>> conditions = new LinkedHashMap<>();
        collect(query, conditions);
        return conditions;
    }

    private static void collect(Document query, Map<String, List<Object>> conditions) {
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            if (!entry.getKey().startsWith("$")) {
                conditions.computeIfAbsent(entry.getKey(), k -> new ArrayList<>()).add(entry.getValue());
            } else if (entry.getKey().equals("$and") && entry.getValue() instanceof Collection<?> conjuncts) {
                for (Object conjunct : conjuncts) {
                    if (conjunct instanceof Document d) {
                        collect(d, conditions);
                    }
                }
            }
        }
    }

    /** The values the first equality or $in among a field's conditions admits; null when there is none. */
    private static List<Object> pointValues(List<Object> conditions) {
        if (conditions == null) {
            return null;
        }
        for (Object condition : conditions) {
            List<Object> values = pointValues(condition);
            if (values != null) {
                return values;
            }
        }
        return null;
    }

    /**
     * The _id lookup's documents are exactly those whose id is one of the condition's strings when that condition is the
     * filter's only one on _id, at its top level: the matcher then tests the rest of the filter only. (It tests an $in
     * by walking its list, so a page of 500 entities looked up by id cost 500 × 500 comparisons.) Other values keep the
     * whole filter: the index's equality and the matcher's could differ on them (numbers of different types).
     */
    private static Candidates withoutIdCondition(Candidates byId, Document query, Map<String, List<Object>> conditions) {
        List<Object> onId = conditions.get("_id");
        if (onId.size() != 1 || !query.containsKey("_id")) {
            return byId;
        }
        List<Object> values = pointValues(query.get("_id"));
        if (values == null || !values.stream().allMatch(v -> v instanceof String)) {
            return byId;
        }
        Document residual = new Document(query);
        residual.remove("_id");
        return new Candidates(byId.documents(), byId.ordered(), byId.explain(), residual);
    }

    private static <P> Candidates byId(Host<P> host, Map<String, List<Object>> conditions) {
        List<Object> values = pointValues(conditions.get("_id"));
        if (values == null) {
            return null;
        }
        Document idQuery = new Document("_id", values.size() == 1 ? values.get(0) : new Document("$in", values));
        for (Index<P> index : host.indexes()) {
            if (index.getKeys().size() == 1 && index.getKeys().get(0).getKey().equals("_id") && index.canHandle(idQuery)) {
                List<Document> documents = new ArrayList<>();
                for (P position : index.getPositions(idQuery)) {
                    Document document = host.document(position);
                    if (document != null) {
                        documents.add(document);
                    }
                }
                return new Candidates(documents.stream(), false, fetch(ixscan(index, "forward")));
            }
        }
        return null;
    }

    private static <P> Choice<P> choose(OrderedIndex<P> index, Map<String, List<Object>> conditions, Document orderBy) {
        List<IndexKey> keys = index.getKeys();
        List<String> prefixes = List.of("");
        Set<String> fixed = new HashSet<>();
        int equalities = 0;
        for (int i = 0; i < keys.size(); i++) {
            String field = keys.get(i).getKey();
            List<Object> values = pointValues(conditions.get(field));
            if (values == null || values.isEmpty() || prefixes.size() * values.size() > MAX_PREFIXES) {
                break;
            }
            if (index.isDeclaredSparse() && values.stream().anyMatch(v -> v == null || v instanceof Missing)) {
                // {a: null} also matches documents without a, which a sparse index leaves out.
                break;
            }
            List<String> parts = new ArrayList<>(values.size());
            for (Object value : values) {
                String part = KeyEncoding.encode(value, index.isAscending(i));
                if (part == null) {
                    parts = null;
                    break;
                }
                if (!parts.contains(part)) {
                    parts.add(part);
                }
            }
            if (parts == null) {
                break;
            }
            List<String> extended = new ArrayList<>(prefixes.size() * parts.size());
            for (String prefix : prefixes) {
                for (String part : parts) {
                    extended.add(prefix + part);
                }
            }
            prefixes = extended;
            if (parts.size() == 1) {
                fixed.add(field);
            }
            equalities++;
        }
        String[] bounds = null;
        if (equalities < keys.size()) {
            String next = keys.get(equalities).getKey();
            List<Object> onNext = conditions.getOrDefault(next, List.of());
            bounds = bounds(onNext, index.isAscending(equalities), index.isMultikey());
            if (equalities == 0 && bounds == null && index.isDeclaredSparse() && onNext.stream().anyMatch(QueryPlanner::existsOnly)) {
                // {field: {$exists: true}} on a sparse index's first key: every entry is a candidate (the outbox relay's query).
                bounds = new String[] {null, null};
            }
        }
        if (equalities == 0 && bounds == null) {
            return null;
        }
        List<String[]> ranges = new ArrayList<>(prefixes.size());
        for (String prefix : prefixes) {
            String from = bounds != null && bounds[0] != null ? prefix + bounds[0] : prefix;
            String to = bounds != null && bounds[1] != null ? prefix + bounds[1] : prefix + KeyEncoding.AFTER;
            ranges.add(new String[] {from, to});
        }
        // Several prefixes ($in) each read in the sort order are merged by what follows their prefix.
        int direction = index.isMultikey() ? 0 : direction(index, equalities, fixed, orderBy);
        boolean exact = isExact(keys, equalities, bounds, conditions);
        return new Choice<>(index, ranges, prefixes, direction != 0, direction < 0, equalities, bounds != null, exact);
    }

    /**
     * Whether the ranges hold exactly the documents the conditions admit: every field with a condition is one of the
     * equality keys (one equality or $in condition) or the next key with a range bounded on both ends by values of
     * one type (so MongoDB's type bracketing and the key order agree).
     */
    private static boolean isExact(List<IndexKey> keys, int equalities, String[] bounds, Map<String, List<Object>> conditions) {
        for (Map.Entry<String, List<Object>> field : conditions.entrySet()) {
            int position = -1;
            for (int i = 0; i < keys.size(); i++) {
                if (keys.get(i).getKey().equals(field.getKey())) {
                    position = i;
                }
            }
            if (position < 0 || position > equalities || field.getValue().size() != 1 && position < equalities) {
                return false;
            }
            if (position < equalities) {
                continue;
            }
            if (bounds == null || bounds[0] == null || bounds[1] == null) {
                return false;
            }
            Class<?> type = null;
            for (Object condition : field.getValue()) {
                if (!(condition instanceof Document d)) {
                    return false;
                }
                for (Map.Entry<String, Object> op : d.entrySet()) {
                    if (!RANGE_OPERATORS.contains(op.getKey()) || op.getValue() == null || KeyEncoding.encode(op.getValue(), true) == null) {
                        return false;
                    }
                    Class<?> here = op.getValue() instanceof Number ? Number.class : op.getValue().getClass();
                    if (type != null && type != here) {
                        return false;
                    }
                    type = here;
                }
            }
        }
        return true;
    }

    private static final Set<String> RANGE_OPERATORS = Set.of("$gt", "$gte", "$lt", "$lte");

    /**
     * +1 when reading the index forward yields the sort, -1 when reading it backward does, 0 when it cannot: the sort's
     * fields, leaving out those fixed by an equality, must be the index's next keys (then its _id), all in the index's
     * directions or all reversed. No sort: any order will do.
     */
    private static int direction(OrderedIndex<?> index, int equalities, Set<String> fixed, Document orderBy) {
        if (orderBy == null || orderBy.isEmpty()) {
            return 1;
        }
        List<IndexKey> keys = index.getKeys();
        int position = equalities;
        int direction = 0;
        for (Map.Entry<String, Object> sort : orderBy.entrySet()) {
            if (fixed.contains(sort.getKey())) {
                continue;
            }
            if (!(sort.getValue() instanceof Number n) || n.doubleValue() == 0) {
                return 0;
            }
            boolean sortAscending = n.doubleValue() > 0;
            boolean keyAscending;
            if (position < keys.size()) {
                if (!keys.get(position).getKey().equals(sort.getKey())) {
                    return 0;
                }
                keyAscending = index.isAscending(position);
            } else if (position == keys.size() && sort.getKey().equals("_id")) {
                keyAscending = true; // entries end with the ascending _id
            } else {
                return 0;
            }
            int here = sortAscending == keyAscending ? 1 : -1;
            if (direction != 0 && here != direction) {
                return 0;
            }
            direction = here;
            position++;
        }
        return direction == 0 ? 1 : direction;
    }

    /** The values an equality or $in condition admits; null for anything else (operators, documents, arrays, regexes). */
    private static List<Object> pointValues(Object condition) {
        if (condition instanceof Document d) {
            if (d.size() == 1 && d.containsKey("$eq")) {
                Object value = d.get("$eq");
                return isPoint(value) ? java.util.Collections.singletonList(value) : null;
            }
            if (d.size() == 1 && d.get("$in") instanceof Collection<?> values) {
                List<Object> points = new ArrayList<>(values.size());
                for (Object value : values) {
                    if (!isPoint(value)) {
                        return null;
                    }
                    points.add(value);
                }
                return points;
            }
            return null;
        }
        return isPoint(condition) ? java.util.Collections.singletonList(condition) : null;
    }

    private static boolean isPoint(Object value) {
        return !(value instanceof Document || value instanceof Collection<?> || value instanceof Pattern
            || value instanceof BsonRegularExpression);
    }

    private static boolean existsOnly(Object condition) {
        return condition instanceof Document d && d.size() == 1 && Objects.equals(d.get("$exists"), Boolean.TRUE);
    }

    /** {from, to} suffixes (either may be null: unbounded) for the range operators on one key, the tightest of all; null when there are none. */
    private static String[] bounds(List<Object> conditions, boolean ascending, boolean multikey) {
        String from = null;
        String to = null;
        for (Object condition : conditions) {
            if (multikey && (from != null || to != null)) {
                // An array matches each range operator with any of its elements, maybe a different one for each
                // ({v: [1, 10]} is in v >= 2 and in v <= 8): on a multikey index only one bound narrows, as in MongoDB.
                break;
            }
            if (!(condition instanceof Document d)) {
                continue;
            }
            for (Map.Entry<String, Object> op : d.entrySet()) {
                Object value = op.getValue();
                if (value == null || !isPoint(value)) {
                    continue;
                }
                String encoded = KeyEncoding.encode(value, ascending);
                if (encoded == null) {
                    continue;
                }
                String past = encoded + KeyEncoding.AFTER;
                // In a descending key, greater values come first: the lower bound of the values is the upper one of the keys.
                String lower = null;
                String upper = null;
                switch (op.getKey()) {
                    case "$gt" -> {
                        if (ascending) lower = past; else upper = encoded;
                    }
                    case "$gte" -> {
                        if (ascending) lower = encoded; else upper = past;
                    }
                    case "$lt" -> {
                        if (ascending) upper = encoded; else lower = past;
                    }
                    case "$lte" -> {
                        if (ascending) upper = past; else lower = encoded;
                    }
                    default -> {
                        // other operators narrow nothing here; the matcher applies them
                    }
                }
                if (lower != null && (from == null || lower.compareTo(from) > 0)) {
                    from = lower;
                }
                if (upper != null && (to == null || upper.compareTo(to) < 0)) {
                    to = upper;
                }
            }
        }
        return from == null && to == null ? null : new String[] {from, to};
    }

    private static <P> Stream<Document> read(Host<P> host, Choice<P> choice) {
        KeyStore<P> store = choice.index().store();
        Iterator<P> positions;
        if (choice.ordered() && choice.ranges().size() > 1) {
            positions = merged(store, choice);
        } else {
            Iterator<String[]> ranges = choice.ranges().iterator();
            positions = new Iterator<>() {
                private Iterator<Map.Entry<String, P>> current = java.util.Collections.emptyIterator();

                @Override
                public boolean hasNext() {
                    while (!current.hasNext() && ranges.hasNext()) {
                        String[] range = ranges.next();
                        current = store.range(range[0], range[1], choice.descending());
                    }
                    return current.hasNext();
                }

                @Override
                public P next() {
                    hasNext();
                    return current.next().getValue();
                }
            };
        }
        Stream<P> stream = StreamSupport.stream(Spliterators.spliteratorUnknownSize(positions, Spliterator.ORDERED), false);
        if (choice.index().isMultikey() || (!choice.ordered() && choice.ranges().size() > 1)) {
            stream = stream.distinct();
        }
        return stream.map(host::document).filter(Objects::nonNull);
    }

    /** The entries of several ranges, each in key order, merged by the key after each range's prefix (a k-way merge). */
    private static <P> Iterator<P> merged(KeyStore<P> store, Choice<P> choice) {
        record Head<P>(String rest, P position, Iterator<Map.Entry<String, P>> entries, int prefixLength) {
        }
        java.util.Comparator<Head<P>> byRest = java.util.Comparator.comparing(Head::rest);
        java.util.PriorityQueue<Head<P>> heads = new java.util.PriorityQueue<>(choice.descending() ? byRest.reversed() : byRest);
        for (int i = 0; i < choice.ranges().size(); i++) {
            String[] range = choice.ranges().get(i);
            Iterator<Map.Entry<String, P>> entries = store.range(range[0], range[1], choice.descending());
            int prefixLength = choice.prefixes().get(i).length();
            if (entries.hasNext()) {
                Map.Entry<String, P> first = entries.next();
                heads.add(new Head<>(first.getKey().substring(prefixLength), first.getValue(), entries, prefixLength));
            }
        }
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return !heads.isEmpty();
            }

            @Override
            public P next() {
                Head<P> head = heads.remove();
                if (head.entries().hasNext()) {
                    Map.Entry<String, P> following = head.entries().next();
                    heads.add(new Head<>(following.getKey().substring(head.prefixLength()), following.getValue(), head.entries(), head.prefixLength()));
                }
                return head.position();
            }
        };
    }

    private static Document explainIndex(Choice<?> choice, boolean sorted) {
        return fetch(ixscan(choice.index(), choice.descending() ? "backward" : "forward")
            .append("isMultiKey", choice.index().isMultikey())
            .append("linepackEqualityKeys", choice.equalities())
            .append("linepackRange", choice.ranged())
            .append("linepackProvidesSort", sorted && choice.ordered()));
    }

    private static Document ixscan(Index<?> index, String direction) {
        Document keyPattern = new Document();
        for (IndexKey key : index.getKeys()) {
            keyPattern.append(key.getKey(), key.isAscending() ? 1 : -1);
        }
        return new Document("stage", "IXSCAN").append("keyPattern", keyPattern).append("indexName", index.getName())
            .append("direction", direction);
    }

    private static Document fetch(Document input) {
        return new Document("stage", "FETCH").append("inputStage", input);
    }
}
