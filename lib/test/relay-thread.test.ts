/**
 * The outbox relay thread's Redis health as the loop reports it (linepack_redis_up{client="outbox-relay:<stream>"}):
 * up once the thread's clients are ready, and down as soon as the thread is gone — not the dead thread's last word
 * while its replacement cannot start. A real worker thread, real MongoDB-protocol and Redis servers (the suite's).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OutboxRelayThread } from '../events/relay-thread';
import { createLogger } from '../logger';
import { metricsRegistry } from '../metrics';
import { until } from '../testing/until';

/** The relay thread, with a way to make it die as a thread can. */
class CrashableRelayThread extends OutboxRelayThread {
  crash(): void {
    this.post({ type: 'crash' });
  }
}

const redisUp = async (client: string): Promise<number | undefined> =>
  (await metricsRegistry.getSingleMetric('linepack_redis_up')!.get()).values.find((v) => v.labels['client'] === client)?.value;

it('reports the relay’s Redis up while its thread runs, and down once the thread died and none replaced it', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-thread-'));
  const markerFile = path.join(dir, 'cannot-start');
  const stream = `test:events:${randomUUID()}`;
  const database = `t${randomUUID().slice(0, 8)}_relay_thread`;
  const thread = new CrashableRelayThread(
    { file: path.join(__dirname, 'fixtures', 'relay-thread.ts'), execArgv: ['--import', 'tsx'] },
    { mongoUri: process.env['MONGODB_URI']!, database, redisUrl: process.env['REDIS_URL']!, stream, markerFile },
    createLogger('test', 'silent'),
    [{ stream }, { stream }].map((outbox, i) => ({ ...outbox, collection: { countDocuments: async () => i } as never })),
  );
  try {
    thread.start();
    expect(
      await until(
        () => redisUp(`outbox-relay:${stream}`),
        (up) => up === 1,
      ),
    ).toBe(1);
    // Its replacements exit as they start: no thread has a Redis client any more.
    writeFileSync(markerFile, '');
    thread.crash();
    expect(
      await until(
        () => redisUp(`outbox-relay:${stream}`),
        (up) => up === 0,
      ),
    ).toBe(0);
  } finally {
    await thread.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
