/**
 * The embedded MongoDB stand-in for development and tests: mongo-java-server, launched through our own
 * tiny Java launcher in tools/mongo (built with Maven on first use), in memory or file-backed (H2 MVStore).
 *
 * The launcher prints `LISTENING <port>` once ready, stops cleanly on SIGTERM and exits when its stdin reaches EOF,
 * so the JVM never outlives the Node process that spawned it.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from '../repo-root';
import { howExited, isExecutable, processAlive, terminate, which } from './child-process';

export interface EmbeddedMongo {
  /** Connection string for the `mongodb` driver, e.g. `mongodb://127.0.0.1:37017/`. */
  uri: string;
  port: number;
  /** The JVM's process id (its own process group): what a crash test kills. */
  pid: number;
  /** Resolves when the JVM has exited, for whatever reason, saying how (`signal SIGKILL`). */
  exited: Promise<string>;
  /** SIGTERM, wait for the JVM to exit (SIGKILL after a timeout). Idempotent. */
  stop(): Promise<void>;
}

/** Java 17+ or Maven is missing: the message is one line telling the user what to do. */
export class EmbeddedMongoUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedMongoUnavailableError';
  }
}

const MAIN_CLASS = 'dev.linepack.mongo.EmbeddedMongo';
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const BUILD_LOCK_STALE_MS = 15 * 60_000;
/**
 * JVM flags. G1 with a short pause goal: the server holds every tenant's data on one heap, and the serial collector
 * it had stopped every command 100–190 ms every second under a tenant's bulk writes, and up to 1.4 s for a full
 * collection — the whole tail of every other tenant's latency (bench:fairness with -Xlog:gc). G1's pauses there were
 * 40 ms at the median; ZGC and Shenandoah stalled allocation for seconds on two cores.
 * Objects that survive one young collection go straight to the old generation (MaxTenuringThreshold=0): what survives
 * here is nearly all stored documents and their index entries, which live as long as the data, and copying them
 * between survivor spaces up to 15 times was most of each pause (a 100,000-feature import: pauses 33 → 17 ms at the
 * median, 7.9 → 5.1 s in all). Not for the test suite's shared server (`promoteSurvivors: false`): its tests drop their
 * data within seconds, and promoted at once that data cost the old generation's collections more than the copying
 * saved (test/domain: 186 CPU-seconds against 167).
 */
const JVM_ARGS = ['-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-XX:-UsePerfData', '-Xss512k'];
const PROMOTE_SURVIVORS_JVM_ARGS = ['-XX:MaxTenuringThreshold=0'];
/**
 * The file-backed server keeps its data in H2 pages on disk (a 16 MB page cache) and needs heap only for the commands
 * in flight: capped, so its resident size stays bounded however large the file (the JVM's default would be a quarter
 * of the machine's memory). The in-memory server (tests) holds its data on the heap and is left uncapped.
 */
const H2_JVM_ARGS = ['-Xmx512m'];

const toolDir = path.join(repoRoot, 'tools', 'mongo');
const targetDir = path.join(toolDir, 'target');
const classesDir = path.join(targetDir, 'classes');
const libDir = path.join(targetDir, 'lib');
const stampFile = path.join(targetDir, 'linepack-build.stamp');
const lockDir = path.join(targetDir, '.linepack-build.lock');
const launcherClass = path.join(classesDir, ...MAIN_CLASS.split('.')) + '.class';

function unavailable(reason: string): EmbeddedMongoUnavailableError {
  return new EmbeddedMongoUnavailableError(
    `Embedded MongoDB needs Java 17+ and Maven on PATH (${reason}). ` +
      'Install them (apt-get install openjdk-17-jdk-headless maven) or set MONGODB_URI to a real MongoDB.',
  );
}

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs a command to completion, collecting stdout+stderr (bounded). Rejects only if it cannot be spawned. */
function run(command: string, args: string[], cwd: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.length > 200_000) output = output.slice(-100_000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, output }));
  });
}

function tail(text: string, lines = 25): string {
  return text
    .replace(/\x1b\[[0-9;]*m/g, '')
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .join('\n');
}

let javaPromise: Promise<string> | null = null;

/** The java executable ($JAVA_HOME/bin/java, else PATH), checked to be version 17 or newer. */
function findJava(): Promise<string> {
  javaPromise ??= (async () => {
    const javaHome = process.env['JAVA_HOME'];
    let java = javaHome ? path.join(javaHome, 'bin', 'java') : null;
    if (!java || !(await isExecutable(java))) java = await which('java');
    if (!java) throw unavailable('java not found');
    let result: RunResult;
    try {
      result = await run(java, ['-version'], toolDir);
    } catch (err) {
      throw unavailable(`${java} cannot be run: ${(err as Error).message}`);
    }
    // `openjdk version "17.0.15" 2025-04-15`, `java version "1.8.0_392"`
    const match = /version "(\d+)(?:\.(\d+))?/.exec(result.output);
    if (!match) throw unavailable(`cannot read the version of ${java}`);
    const major = match[1] === '1' ? Number(match[2]) : Number(match[1]);
    if (major < 17) throw unavailable(`${java} is Java ${major}`);
    return java;
  })();
  javaPromise.catch(() => {
    javaPromise = null;
  });
  return javaPromise;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(full)));
    else if (entry.isFile()) files.push(full);
  }
  return files;
}

/** A hash of everything the build reads: pom.xml and src/ (content-based, so git checkouts do not force rebuilds). */
async function sourceFingerprint(): Promise<string> {
  const hash = createHash('sha256');
  const files = [path.join(toolDir, 'pom.xml'), ...(await listFiles(path.join(toolDir, 'src'))).sort()];
  for (const file of files) {
    hash.update(path.relative(toolDir, file).split(path.sep).join('/'));
    hash.update('\0');
    hash.update(await readFile(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

async function isUpToDate(fingerprint: string): Promise<boolean> {
  try {
    const [stamp, jars] = await Promise.all([readFile(stampFile, 'utf8'), readdir(libDir)]);
    await access(launcherClass);
    return stamp.trim() === fingerprint && jars.some((name) => name.startsWith('mongo-java-server-core'));
  } catch {
    return false;
  }
}

/** A cross-process lock (atomic mkdir) so concurrent `npm start` / `npm test` runs do not build at the same time. */
async function withBuildLock<T>(fn: () => Promise<T>): Promise<T> {
  await mkdir(targetDir, { recursive: true });
  const ownerFile = path.join(lockDir, 'owner');
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(ownerFile, String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(await readFile(ownerFile, 'utf8').catch(() => ''));
      const age = Date.now() - (await stat(lockDir).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if ((owner > 0 && !processAlive(owner)) || age > BUILD_LOCK_STALE_MS) {
        await rm(lockDir, { recursive: true, force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

async function build(log?: (msg: string) => void): Promise<void> {
  const mvn = await which('mvn');
  if (!mvn) throw unavailable('mvn not found');
  const args = ['-B', '-q', '-Dstyle.color=never', '-f', path.join(toolDir, 'pom.xml'), 'process-classes'];
  const started = Date.now();
  log?.('Building the embedded MongoDB launcher (tools/mongo; the first build downloads mongo-java-server from Maven Central)...');
  let result = await run(mvn, args, toolDir);
  if (result.code !== 0) {
    // Maybe there is no network but ~/.m2 already holds everything: try once offline.
    const offline = await run(mvn, ['-o', ...args], toolDir);
    if (offline.code !== 0) {
      throw new Error(`Building tools/mongo failed (mvn ${args.join(' ')}, exit ${result.code ?? result.signal}):\n${tail(result.output)}`);
    }
    result = offline;
  }
  log?.(`Built the embedded MongoDB launcher in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
}

let preparePromise: Promise<void> | null = null;

/**
 * Makes sure Java 17+ is there and tools/mongo is built. Idempotent and cheap once built: it rebuilds (with Maven)
 * only when pom.xml or src/ changed since the last successful build.
 */
export function prepareEmbeddedMongo(log?: (msg: string) => void): Promise<void> {
  preparePromise ??= (async () => {
    await findJava();
    if (await isUpToDate(await sourceFingerprint())) return;
    await withBuildLock(async () => {
      // Fingerprint again under the lock: another process may just have built it.
      const fingerprint = await sourceFingerprint();
      if (await isUpToDate(fingerprint)) return;
      await rm(stampFile, { force: true });
      await build(log);
      await writeFile(stampFile, fingerprint + '\n');
    });
  })();
  preparePromise.catch(() => {
    preparePromise = null;
  });
  return preparePromise;
}

/**
 * Starts mongo-java-server on 127.0.0.1: in memory, or file-backed when `dataFile` is given (the file survives
 * restarts; parent directories are created). `port` 0 or absent picks a free port. `plain` leaves out Linepack's
 * secondary indexes and query planning (tools/mongo QueryPlanner), for tests and benchmarks that compare with them.
 * `promoteSurvivors: false` leaves the JVM's survivor ageing as it is (see JVM_ARGS).
 */
export async function startEmbeddedMongo(
  opts: { dataFile?: string; port?: number; plain?: boolean; promoteSurvivors?: boolean; log?: (msg: string) => void } = {},
): Promise<EmbeddedMongo> {
  const { log } = opts;
  await prepareEmbeddedMongo(log);
  const java = await findJava();
  const args = [
    ...JVM_ARGS,
    ...(opts.promoteSurvivors === false ? [] : PROMOTE_SURVIVORS_JVM_ARGS),
    ...(opts.dataFile ? H2_JVM_ARGS : []),
    '-cp',
    `${classesDir}${path.delimiter}${path.join(libDir, '*')}`,
    MAIN_CLASS,
    '--host',
    '127.0.0.1',
    '--port',
    String(opts.port ?? 0),
  ];
  if (opts.dataFile) args.push('--h2', path.resolve(opts.dataFile));
  if (opts.plain) args.push('--plain');

  const started = Date.now();
  // stdin is a pipe that is never written: when this process goes away, the JVM sees EOF and exits.
  // Its own process group: a terminal's Ctrl-C reaches only this process, which stops the services
  // writing to the database before the database itself.
  const child = spawn(java, args, { cwd: toolDir, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stderrTail = '';
  let ready = false;
  let stopping = false;
  const stderrLines = createInterface({ input: child.stderr });
  stderrLines.on('line', (line) => {
    stderrTail = (stderrTail + line + '\n').slice(-4000);
    if (ready && !stopping) log?.(`embedded-mongo: ${line}`);
  });
  child.stdin.on('error', () => {}); // EPIPE once the JVM is gone

  const port = await new Promise<number>((resolve, reject) => {
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    const timer = setTimeout(() => {
      fail(new Error(`Embedded MongoDB did not report LISTENING within ${READY_TIMEOUT_MS / 1000} s. stderr:\n${tail(stderrTail)}`));
    }, READY_TIMEOUT_MS);
    child.once('error', (err: NodeJS.ErrnoException) => {
      fail(err.code === 'ENOENT' ? unavailable('java not found') : new Error(`Cannot start the embedded MongoDB (${java}): ${err.message}`));
    });
    child.once('exit', (code, signal) => {
      // Let the last stderr lines arrive before reporting.
      setImmediate(() => fail(new Error(`Embedded MongoDB exited before it was ready (exit ${code ?? signal}). stderr:\n${tail(stderrTail) || '(empty)'}`)));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^LISTENING (\d+)$/.exec(line.trim());
      if (match && !ready) {
        ready = true;
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(Number(match[1]));
      }
    });
  });

  log?.(
    `Embedded MongoDB (${opts.dataFile ? path.resolve(opts.dataFile) : 'in memory'}) listening on 127.0.0.1:${port} after ${((Date.now() - started) / 1000).toFixed(1)} s.`,
  );

  // Neither the JVM nor its pipes keep this process alive; the stdin pipe still ties the JVM's life to ours.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as Socket).unref?.();

  let stopPromise: Promise<void> | null = null;
  return {
    uri: `mongodb://127.0.0.1:${port}/`,
    port,
    pid: child.pid!,
    exited: howExited(child),
    stop() {
      stopPromise ??= (async () => {
        stopping = true;
        if (await terminate(child, STOP_TIMEOUT_MS)) log?.(`Embedded MongoDB on port ${port} did not stop within ${STOP_TIMEOUT_MS / 1000} s; killed it.`);
        child.stdin.destroy();
      })();
      return stopPromise;
    },
  };
}
