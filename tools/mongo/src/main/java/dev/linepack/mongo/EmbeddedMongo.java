package dev.linepack.mongo;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

/**
 * Linepack's local MongoDB stand-in: mongo-java-server on one port, in memory or file-backed (H2 MVStore).
 *
 * <pre>
 *   java -cp 'target/classes:target/lib/*' dev.linepack.mongo.EmbeddedMongo [options]
 *     --port N           port to listen on; 0 (default) picks a free one
 *     --host ADDR        address to bind (default 127.0.0.1)
 *     --h2 FILE          keep the data in FILE (H2 MVStore, created 0600), surviving restarts and crashes: a write
 *                        is answered only once it is committed and fsynced (DurableH2Backend); default: in memory
 *     --ignore-stdin     keep running when stdin reaches EOF (for a manual run with stdin closed)
 *     --wire-version N   experimental: report maxWireVersion N instead of the library's default (8)
 *     --plain            mongo-java-server's own query path only: no secondary indexes, no planning (QueryPlanner),
 *                        no explain; for comparisons in tests and benchmarks
 * </pre>
 *
 * Contract with lib/infra/embedded-mongo.ts: once the server accepts connections it prints exactly one line,
 * {@code LISTENING <port>}, on stdout (nothing else is ever written there). It stops cleanly, flushing the H2 file,
 * on SIGTERM/SIGINT and when stdin reaches EOF, so it never outlives the process that spawned it with a stdin pipe.
 * Logging (slf4j-simple, see simplelogger.properties) is warnings and errors only, on stderr.
 */
public final class EmbeddedMongo {

    private EmbeddedMongo() {
    }

    private static final class Options {
        String host = "127.0.0.1";
        int port = 0;
        Path h2File;
        boolean watchStdin = true;
        Integer wireVersion;
        boolean plain;
    }

    /**
     * Threads running the clients' commands. Each connection's commands run on the one event-loop thread it was given,
     * and Netty's default (two per core) put many connections on each: a tenant's 250-document insert then held every
     * command of the connections sharing its thread, another tenant's short read among them (bench:fairness, B's page
     * p99 under A's import 7.3× its baseline, 4.3× with 32). With a thread for nearly every connection the OS shares
     * the cores between commands instead; an idle event-loop thread costs a stack and a selector.
     */
    private static final int WORKER_THREADS = 32;

    /** Off with --plain; read by the backends when they open a database (the H2 one does so in its constructor). */
    static volatile boolean secondaryIndexes = true;

    public static void main(String[] args) {
        // stdout is the protocol channel: keep a private handle and route anything else printed there to stderr.
        PrintStream protocol = System.out;
        System.setOut(System.err);

        Options options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("EmbeddedMongo: " + e.getMessage());
            System.err.println("usage: EmbeddedMongo [--port N] [--host ADDR] [--h2 FILE] [--ignore-stdin] [--wire-version N] [--plain]");
            System.exit(2);
            return;
        }

        MongoServer server;
        int port;
        try {
            MongoBackend backend = openBackend(options);
            if (options.wireVersion != null) {
                backend.version(new ReportedVersion(options.wireVersion));
            }
            server = new MongoServer(backend);
            try {
                server.bind(new InetSocketAddress(options.host, options.port), 1, WORKER_THREADS);
            } catch (RuntimeException e) {
                backend.close();
                throw e;
            }
            InetSocketAddress address = server.getLocalAddress();
            port = address.getPort();
        } catch (Exception e) {
            System.err.println("EmbeddedMongo: failed to start on " + options.host + ":" + options.port
                + (options.h2File != null ? " with " + options.h2File : "") + ": " + describe(e));
            System.exit(1);
            return;
        }

        CountDownLatch stopped = new CountDownLatch(1);
        AtomicBoolean stopping = new AtomicBoolean(false);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (stopping.compareAndSet(false, true)) {
                try {
                    // Closes the clients, the event loops and then the backend (the H2 MVStore is written and closed).
                    server.shutdownNow();
                } catch (RuntimeException e) {
                    System.err.println("EmbeddedMongo: error during shutdown: " + describe(e));
                } finally {
                    stopped.countDown();
                }
            }
        }, "embedded-mongo-shutdown"));

        protocol.println("LISTENING " + port);
        protocol.flush();

        if (options.watchStdin) {
            Thread watcher = new Thread(EmbeddedMongo::exitOnStdinEof, "embedded-mongo-stdin-watch");
            watcher.setDaemon(true);
            watcher.start();
        }

        // Stay alive until the shutdown hook has run (JVM exit via signal or stdin EOF).
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static MongoBackend openBackend(Options options) throws IOException {
        secondaryIndexes = !options.plain;
        if (options.h2File == null) {
            return options.plain ? new MemoryBackend() : new IndexedMemoryBackend();
        }
        return DurableH2Backend.open(options.h2File.toAbsolutePath());
    }

    /** Reads stdin until EOF (the parent closed the pipe or died), then exits, which runs the shutdown hook. */
    private static void exitOnStdinEof() {
        byte[] buffer = new byte[256];
        try {
            InputStream in = System.in;
            while (in.read(buffer) != -1) {
                // Input carries no meaning; only its end does.
            }
        } catch (IOException e) {
            // A broken stdin means the parent is gone as well.
        }
        System.exit(0);
    }

    private static Options parse(String[] args) {
        Options options = new Options();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--port" -> options.port = parsePort(value(args, ++i, arg));
                case "--host" -> options.host = value(args, ++i, arg);
                case "--h2" -> options.h2File = Path.of(value(args, ++i, arg));
                case "--ignore-stdin" -> options.watchStdin = false;
                case "--plain" -> options.plain = true;
                case "--wire-version" -> options.wireVersion = parseInt(value(args, ++i, arg), arg, 0, 1000);
                default -> throw new IllegalArgumentException("unknown argument '" + arg + "'");
            }
        }
        return options;
    }

    private static String value(String[] args, int index, String flag) {
        if (index >= args.length || args[index].startsWith("--")) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[index];
    }

    private static int parsePort(String text) {
        return parseInt(text, "--port", 0, 65535);
    }

    private static int parseInt(String text, String flag, int min, int max) {
        try {
            int n = Integer.parseInt(text);
            if (n < min || n > max) {
                throw new IllegalArgumentException(flag + " must be between " + min + " and " + max + ", got " + text);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " must be a number, got '" + text + "'");
        }
    }

    private static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (sb.length() > 0) {
                sb.append(" <- ");
            }
            sb.append(t.getClass().getSimpleName());
            if (t.getMessage() != null) {
                sb.append(": ").append(t.getMessage());
            }
        }
        return sb.toString();
    }

    /** A server version reporting a chosen maxWireVersion (experimental, see --wire-version). */
    private record ReportedVersion(int wireVersion) implements MongoVersion {

        @Override
        public List<Integer> getVersionArray() {
            // The MongoDB release that introduced this wire version, as far as it matters to drivers.
            if (wireVersion >= 25) return List.of(8, 0, 0);
            if (wireVersion >= 21) return List.of(7, 0, 0);
            if (wireVersion >= 17) return List.of(6, 0, 0);
            if (wireVersion >= 13) return List.of(5, 0, 0);
            if (wireVersion >= 9) return List.of(4, 4, 0);
            if (wireVersion >= 8) return List.of(4, 2, 0);
            return List.of(4, 0, 0);
        }

        @Override
        public int getWireVersion() {
            return wireVersion;
        }
    }
}
