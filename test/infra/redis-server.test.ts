/** lib/infra/redis-server.ts: a real redis-server, stopped and restarted on the same port. */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { freePort } from '@linepack/lib/infra/free-port';
import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { repoRoot } from '@linepack/lib/repo-root';
import { canConnect, eventually } from '../support/wait';

/** A client that fails fast instead of retrying. (A short disconnectTimeout: ioredis otherwise keeps a 2 s timer after a failed connect.) */
const oneShot = (url: string) =>
  new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false, disconnectTimeout: 50 });

describe('redis-server for tests', () => {
  const started: RedisServerProcess[] = [];
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
  });

  it('freePort returns a bindable port on 127.0.0.1', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(1024);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
    await new Promise((r) => server.close(r));
  });

  it('starts on a free port, answers PING, stops, and restarts on the same port without old data', async () => {
    const first = await startRedisServer();
    started.push(first);
    expect(first.url).toBe(`redis://127.0.0.1:${first.port}`);

    // A long-lived client, as the gateway has: it must come back after the restart on its own.
    const longLived = new Redis(first.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50, disconnectTimeout: 50 });
    longLived.on('error', () => {}); // connection errors while the server is down are expected
    try {
      expect(await longLived.ping()).toBe('PONG');
      await longLived.set('k', 'v');

      await first.stop();
      await first.stop(); // idempotent
      expect(await canConnect(first.port)).toBe(false);
      const probe = oneShot(first.url);
      probe.on('error', () => {});
      await expect(probe.connect().then(() => probe.ping())).rejects.toThrow();
      probe.disconnect();
      await expect(longLived.ping()).rejects.toThrow();

      const second = await startRedisServer({ port: first.port });
      started.push(second);
      expect(second.port).toBe(first.port);
      expect(second.url).toBe(first.url);
      const fresh = oneShot(second.url);
      await fresh.connect();
      expect(await fresh.ping()).toBe('PONG');
      expect(await fresh.get('k')).toBeNull(); // no persistence
      expect(await fresh.config('GET', 'save')).toEqual(['save', '']);
      expect(await fresh.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
      fresh.disconnect();

      expect(await eventually(async () => (await longLived.ping()) === 'PONG', 5_000)).toBe(true);
    } finally {
      longLived.disconnect();
    }
  });

  it('fails clearly when the port is taken', async () => {
    const port = await freePort();
    const blocker = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', () => resolve()));
    try {
      await expect(startRedisServer({ port })).rejects.toThrow(/exited before it was ready[\s\S]*(in use|bind)/i);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  it('does not outlive the Node process that started it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'linepack-redis-'));
    try {
      const script = path.join(dir, 'orphan.ts');
      await writeFile(
        script,
        `import { startRedisServer } from ${JSON.stringify(path.join(repoRoot, 'lib/infra/redis-server'))};\n` +
          `startRedisServer().then((r) => { console.log('PORT ' + r.port); process.exit(0); });\n`,
      );
      const parent = spawn(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      parent.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      expect(await new Promise((resolve) => parent.once('close', resolve))).toBe(0);
      const port = Number(/PORT (\d+)/.exec(out)?.[1]);
      expect(port).toBeGreaterThan(0);
      expect(await eventually(async () => !(await canConnect(port)), 5_000)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
