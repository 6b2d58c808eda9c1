package dev.linepack.mongo;

import java.util.List;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import io.netty.channel.Channel;

/**
 * The H2 database with secondary indexes stored as MVStore maps beside the documents, and planned queries. Map names
 * follow H2Database's own ({@code databases.<ns>}, {@code meta.<ns>}, {@code <ns>._index_<name>}), so its drops remove
 * them and files written before keep opening; an index found empty (a file from before) is built from the documents.
 */
final class IndexedH2Database extends H2Database {

    /** H2Database's constructor opens the existing collections and indexes, before a field of this class is set. */
    private static final ThreadLocal<MVStore> OPENING = new ThreadLocal<>();

    private MVStore store;

    private IndexedH2Database(String databaseName, MVStore store, CursorRegistry cursorRegistry) {
        super(databaseName, store, cursorRegistry);
        this.store = store;
    }

    static IndexedH2Database open(String databaseName, MVStore store, CursorRegistry cursorRegistry) {
        OPENING.set(store);
        try {
            return new IndexedH2Database(databaseName, store, cursorRegistry);
        } finally {
            OPENING.remove();
        }
    }

    private MVStore store() {
        return store != null ? store : OPENING.get();
    }

    @Override
    protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
        String namespace = getFullCollectionNamespace(collectionName);
        MVMap<Object, Document> dataMap = store().openMap("databases." + namespace);
        MVMap<String, Object> metaMap = store().openMap("meta." + namespace);
        return new IndexedH2Collection(this, collectionName, options, dataMap, metaMap, cursorRegistry);
    }

    @Override
    protected Index<Object> openOrCreateSecondaryIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
        String mapName = getFullCollectionNamespace(collectionName) + "._index_" + indexName;
        return new OrderedIndex<>(indexName, keys, sparse, new H2KeyStore(store(), mapName));
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
