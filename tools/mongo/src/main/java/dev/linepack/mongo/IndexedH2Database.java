package dev.linepack.mongo;

import java.util.List;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
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
 * The H2 database with documents stored as BSON ({@code databases.<ns>#bson}), secondary indexes stored as MVStore maps
 * beside them, and planned queries. Other map names follow H2Database's own ({@code meta.<ns>},
 * {@code <ns>._index_<name>}), so its drops remove them; a file written before opens as it is: its Java-serialized
 * documents are moved over once, and an index found empty is built from the documents.
 */
final class IndexedH2Database extends H2Database {

    /** H2Database's name for a collection's documents (its H2Backend finds the databases of a file by this prefix). */
    private static final String JAVA_SERIALIZED_PREFIX = "databases.";
    static final String BSON_SUFFIX = "#bson";

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
        MVMap<Object, Document> dataMap = openDocuments(store(), namespace);
        MVMap<String, Object> metaMap = store().openMap("meta." + namespace);
        return new IndexedH2Collection(this, collectionName, options, dataMap, metaMap, cursorRegistry);
    }

    /** The documents of a collection, stored as BSON (BsonDocumentType), under a name of their own. */
    static String documentsMapName(String namespace) {
        return JAVA_SERIALIZED_PREFIX + namespace + BSON_SUFFIX;
    }

    /**
     * Opens a collection's BSON documents map. A file written before (or by a --plain server) holds them Java-serialized
     * under H2Database's own name: they are moved over once, and that map removed, in one commit.
     */
    private static MVMap<Object, Document> openDocuments(MVStore store, String namespace) {
        MVMap<Object, Document> documents = store.openMap(documentsMapName(namespace), new MVMap.Builder<Object, Document>().valueType(BsonDocumentType.INSTANCE));
        String serializedName = JAVA_SERIALIZED_PREFIX + namespace;
        if (store.hasMap(serializedName)) {
            MVMap<Object, Object> serialized = store.openMap(serializedName);
            for (var entry : serialized.entrySet()) {
                documents.putIfAbsent(entry.getKey(), (Document) entry.getValue());
            }
            store.removeMap(serializedName);
            store.commit();
        }
        return documents;
    }

    @Override
    public void dropCollection(String collectionName, Oplog oplog) {
        super.dropCollection(collectionName, oplog);
        store().removeMap(documentsMapName(getFullCollectionNamespace(collectionName)));
    }

    @Override
    public void moveCollection(MongoDatabase oldDatabase, MongoCollection<?> collection, String newCollectionName) {
        String from = documentsMapName(collection.getFullName());
        super.moveCollection(oldDatabase, collection, newCollectionName);
        if (store().hasMap(from)) {
            store().renameMap(store().openMap(from, new MVMap.Builder<Object, Document>().valueType(BsonDocumentType.INSTANCE)),
                documentsMapName(getFullCollectionNamespace(newCollectionName)));
        }
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
