package dev.linepack.mongo;

import java.util.List;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.index.MemoryUniqueIndex;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.KeyConstraintError;

/**
 * mongo-java-server's in-memory unique index (_id, idempotency keys), which skips an update that left its fields alone
 * ({@link IndexedFields}): its keys before and after are then equal, and mongo-java-server's own check and update do
 * nothing else once it has worked them out.
 */
final class UnchangedKeysUniqueIndex extends MemoryUniqueIndex {

    private final String[] topLevelFields;

    UnchangedKeysUniqueIndex(String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
        this.topLevelFields = IndexedFields.of(keys);
    }

    @Override
    public synchronized void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Integer> collection) {
        if (!IndexedFields.unchanged(topLevelFields, oldDocument, newDocument)) {
            super.checkUpdate(oldDocument, newDocument, collection);
        }
    }

    @Override
    public void updateInPlace(Document oldDocument, Document newDocument, Integer position, MongoCollection<Integer> collection)
        throws KeyConstraintError {
        if (!IndexedFields.unchanged(topLevelFields, oldDocument, newDocument)) {
            super.updateInPlace(oldDocument, newDocument, position, collection);
        }
    }
}
