package dev.linepack.mongo;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.bson.Document;

/**
 * Whether an update left alone every field an index reads. Most updates do (a relay's $pull of published outbox entries
 * from a collection with several indexes): the index's entries then stay as they are, and mongo-java-server working
 * them out for the document before and after, per index, was most of the embedded server's CPU during an ILI import
 * (JFR of bench:fairness). Compared by top-level field, strictly (same types, same order): a field that differs in any
 * way has its keys worked out as before.
 */
final class IndexedFields {

    private IndexedFields() {}

    /** The top-level fields an index's key paths start in, and _id (every entry carries it). */
    static String[] of(List<IndexKey> keys) {
        Set<String> fields = new LinkedHashSet<>();
        fields.add("_id");
        for (IndexKey key : keys) {
            String path = key.getKey();
            int dot = path.indexOf('.');
            fields.add(dot < 0 ? path : path.substring(0, dot));
        }
        return fields.toArray(new String[0]);
    }

    static boolean unchanged(String[] fields, Document before, Document after) {
        for (String field : fields) {
            if (before.containsKey(field) != after.containsKey(field) || !identical(before.get(field), after.get(field))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Equal values of the same types, in the same order: stricter than {@code Document.equals}, which takes some values
     * of different types as equal (whose entry keys could still differ).
     */
    private static boolean identical(Object a, Object b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || a.getClass() != b.getClass()) {
            return false;
        }
        if (a instanceof Document da) {
            Document db = (Document) b;
            if (da.size() != db.size()) {
                return false;
            }
            Iterator<Map.Entry<String, Object>> ia = da.entrySet().iterator();
            Iterator<Map.Entry<String, Object>> ib = db.entrySet().iterator();
            while (ia.hasNext()) {
                Map.Entry<String, Object> ea = ia.next();
                Map.Entry<String, Object> eb = ib.next();
                if (!ea.getKey().equals(eb.getKey()) || !identical(ea.getValue(), eb.getValue())) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof List<?> la) {
            List<?> lb = (List<?>) b;
            if (la.size() != lb.size()) {
                return false;
            }
            for (int i = 0; i < la.size(); i++) {
                if (!identical(la.get(i), lb.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return a.equals(b);
    }

}
