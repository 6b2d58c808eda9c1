package dev.linepack.mongo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.message.MongoQuery;
import io.netty.channel.Channel;

/**
 * The H2 (MVStore) backend made durable: a write command is answered only after its effects are committed to the
 * file and fsynced, and no commit ever captures a write half-applied.
 *
 * <p>Why: mongo-java-server's {@code H2Backend(String)} opens the store with {@code MVStore.open}, whose background
 * thread commits about once a second and also whenever unsaved changes pass a memory threshold, from whichever thread
 * writes next. An acknowledged insert could so be lost by kill -9 (its event already published), and a commit could
 * land between a document's put and its unique-index entry, so that after a crash a retried insert stored the same
 * key twice. Here the store is opened with neither trigger, write commands run one at a time under a write lock and
 * end with {@code commit()} + {@code sync()}, and reads hold a read lock so they only ever see committed data.
 * MVStore finds the newest intact chunk when it is opened again, so a crash mid-commit falls back to the previous
 * acknowledged state.
 */
final class DurableH2Backend extends H2Backend {

    /** Commands that never change data; anything else (including commands unknown here) is treated as a write. */
    private static final Set<String> READ_ONLY_COMMANDS = Set.of(
        "find", "getmore", "count", "distinct", "listcollections", "listindexes", "listdatabases", "killcursors",
        "ping", "hello", "ismaster", "buildinfo", "whatsmyuri", "serverstatus", "dbstats", "collstats",
        "getlasterror", "getparameter", "getcmdlineopts", "hostinfo", "connectionstatus", "endsessions", "explain",
        "getlog", "getfreemonitoringstatus");

    /** Below this share of live data in the chunks, the emptiest are rewritten (MVStore's background default is 90). */
    private static final int TARGET_FILL_RATE = 40;
    /** Bytes of live pages one compaction rewrites at most (it runs while writes wait). */
    private static final int COMPACTION_WRITE_BYTES = 16 * 1024 * 1024;
    /** The page cache, within the launcher's 512 MB heap (lib/infra/embedded-mongo.ts). */
    private static final int CACHE_MB = 128;
    private static final String MODE_MAP = "linepack.mode";
    private static final String WRITTEN_PLAIN = "writtenWithoutSecondaryIndexes";
    /** How long a dead chunk's space stays untouched (see open). */
    private static final int RETENTION_MS = 0;
    /** A fill-rate check every few commits: it walks the chunk list. */
    private static final int COMMITS_PER_COMPACTION = 4;

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private int commitsSinceCompaction;

    private DurableH2Backend(MVStore store) {
        super(store);
    }

    /** Opens (or creates, readable by its owner only) the store file. */
    static DurableH2Backend open(Path file) throws IOException {
        Path parent = file.getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Set<PosixFilePermission> ownerOnly = PosixFilePermissions.fromString("rw-------");
        if (Files.notExists(file)) {
            // MVStore takes an empty file as a new store; creating it here decides its permissions (it holds hashes).
            Files.createFile(file, PosixFilePermissions.asFileAttribute(ownerOnly));
        } else {
            Files.setPosixFilePermissions(file, ownerOnly);
        }
        MVStore store = new MVStore.Builder()
            .fileName(file.toString())
            .autoCommitDisabled() // no background commits
            .autoCommitBufferSize(0) // and none triggered by memory use in the middle of a write
            // Decoded pages kept on the heap (MVStore's default is 16 MB): documents are keyed by random ids, so reading
            // one asset's documents in index order touches a page per document once the collection outgrows the cache.
            .cacheSize(CACHE_MB)
            .open();
        // Every commit is fsynced before its answer (handleCommand), so a chunk no version references any more is needed
        // by no state a crash could fall back to (the newest synced one, or the one before a torn commit): its space can
        // be reused at once. MVStore's default of 45 s assumes unsynced writes, and kept every chunk compaction emptied
        // in the file for that long — most of the file, with writes arriving faster than that.
        store.setRetentionTime(RETENTION_MS);
        forgetIndexesWrittenPast(store);
        return new DurableH2Backend(store);
    }

    /** Databases with secondary indexes in the same file (IndexedH2Database). */
    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
        if (!EmbeddedMongo.secondaryIndexes) {
            return super.openOrCreateDatabase(databaseName);
        }
        return IndexedH2Database.open(databaseName, getMvStore(), getCursorRegistry());
    }

    /**
     * A file written by a --plain server has documents its secondary indexes (OrderedIndex, H2KeyStore) never saw.
     * The next server with indexes drops them, so they are built again from the documents when their collections open.
     */
    private static void forgetIndexesWrittenPast(MVStore store) throws IOException {
        MVMap<String, Object> mode = store.openMap(MODE_MAP);
        if (!EmbeddedMongo.secondaryIndexes && store.getMapNames().stream().anyMatch(name -> name.endsWith(IndexedH2Database.BSON_SUFFIX))) {
            // mongo-java-server's own backend reads Java-serialized documents only: it would see these collections empty.
            store.close();
            throw new IOException("the file holds documents written with Linepack's indexes (BSON); --plain needs a file of its own");
        }
        if (!EmbeddedMongo.secondaryIndexes) {
            mode.put(WRITTEN_PLAIN, Boolean.TRUE);
        } else if (mode.containsKey(WRITTEN_PLAIN)) {
            for (String name : store.getMapNames()) {
                if (store.hasMap(name + H2KeyStore.FLAGS_SUFFIX)) {
                    store.removeMap(name);
                    store.removeMap(name + H2KeyStore.FLAGS_SUFFIX);
                }
            }
            mode.remove(WRITTEN_PLAIN);
        }
        store.commit();
    }

    @Override
    public Document handleCommand(Channel channel, String database, String command, Document query) {
        if (isReadOnly(command, query)) {
            lock.readLock().lock();
            try {
                return super.handleCommand(channel, database, command, query);
            } finally {
                lock.readLock().unlock();
            }
        }
        lock.writeLock().lock();
        try {
            return super.handleCommand(channel, database, command, query);
        } finally {
            // Also after a failed command: what an ordered insert stored before its duplicate key stays stored, as in
            // MongoDB, and must reach the disk before the client hears about it.
            try {
                commitAndSync();
            } finally {
                lock.writeLock().unlock();
            }
        }
    }

    /** Legacy OP_QUERY reads (the driver sends the handshake this way). */
    @Override
    public QueryResult handleQuery(MongoQuery query) {
        lock.readLock().lock();
        try {
            return super.handleQuery(query);
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            super.close();
        } finally {
            lock.writeLock().unlock();
        }
    }

    private void commitAndSync() {
        MVStore store = getMvStore();
        if (store.isClosed() || !store.hasUnsavedChanges()) {
            return;
        }
        store.commit();
        store.sync();
        compactNow(store);
    }

    /**
     * MVStore only appends: every commit writes the changed pages of every changed map (documents and each index) as
     * a new chunk, and the pages they replace stay in the file as dead space. Its background thread would rewrite
     * mostly-dead chunks, but that thread is off here (no background commits), so without this the file grows with
     * every write (100,000 measurements with Linepack's indexes: 1.6 GB). Rewriting the live pages of the emptiest
     * chunks (and committing that, still under the write lock) keeps it to about 2.5 times its live data (0.6 GB),
     * for about a quarter more time per write.
     */
    private void compactNow(MVStore store) {
        if (++commitsSinceCompaction < COMMITS_PER_COMPACTION) {
            return;
        }
        commitsSinceCompaction = 0;
        // The share of live data in the chunks (getFillRate is the share of the file the chunks occupy).
        if (store.getFileStore().getChunksFillRate() >= TARGET_FILL_RATE) {
            return;
        }
        try {
            if (store.compact(TARGET_FILL_RATE, COMPACTION_WRITE_BYTES)) {
                store.commit();
                store.sync();
            }
        } catch (RuntimeException e) {
            // The command's own write is committed and synced: a failed compaction must not turn its answer into an
            // error (the client would retry a write that is stored). The file stays larger until the next one.
            System.err.println("DurableH2Backend: compaction failed: " + e);
        }
    }

    private static boolean isReadOnly(String command, Document query) {
        String name = command.toLowerCase(Locale.ROOT);
        if (name.equals("aggregate")) {
            // $out and $merge write their results into a collection.
            Object pipeline = query.get("pipeline");
            if (pipeline instanceof List<?> stages) {
                for (Object stage : stages) {
                    if (stage instanceof Document d && (d.containsKey("$out") || d.containsKey("$merge"))) {
                        return false;
                    }
                }
            }
            return true;
        }
        return READ_ONLY_COMMANDS.contains(name);
    }
}
