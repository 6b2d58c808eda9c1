package dev.linepack.mongo;

import java.util.List;

import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import io.netty.channel.Channel;

/** The in-memory server (tests) with secondary indexes and planned queries ({@link QueryPlanner}). */
final class IndexedMemoryBackend extends MemoryBackend {

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new Database(databaseName, getCursorRegistry());
    }

    private static final class Database extends MemoryDatabase {

        Database(String databaseName, CursorRegistry cursorRegistry) {
            super(databaseName, cursorRegistry);
        }

        @Override
        protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
            return new IndexedMemoryCollection(this, collectionName, options, cursorRegistry);
        }

        @Override
        protected Index<Integer> openOrCreateSecondaryIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            return new OrderedIndex<>(indexName, keys, sparse, new MemoryKeyStore<>());
        }

        @Override
        protected Index<Integer> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            return new UnchangedKeysUniqueIndex(indexName, keys, sparse);
        }

        @Override
        public Document handleCommand(Channel channel, String command, Document query, DatabaseResolver resolver, Oplog oplog) {
            Document answer = IndexedCommands.handle(this, command, query, resolver, oplog);
            if (answer != null) {
                clearLastStatus(channel);
                return answer;
            }
            return super.handleCommand(channel, command, query, resolver, oplog);
        }
    }
}
