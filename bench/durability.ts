/**
 * `npm run bench:durability`: what durable writes cost on the embedded MongoDB.
 * The same ingest through the gateway against the in-memory server (baseline: nothing reaches a disk)
 * and against the file-backed one `npm start` uses, where every acknowledged write is committed and
 * fsynced before the answer (tools/mongo EmbeddedMongo.java). Ratios compare runs of this invocation.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { createAsset, startTestStack } from '../test/support/stack';
import { printTable, type Result } from './harness';
import { measureIngest } from './ingest';

async function ingest(label: string, database: EmbeddedMongo): Promise<Result[]> {
  const stack = await startTestStack({ mongoUri: database.uri, credentialCacheTtlSeconds: 30 });
  try {
    const { apiKey } = await stack.tenantWithKey({ tier: 'ENTERPRISE' });
    const line = await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Bench line' });
    return await measureIngest(stack.gatewayUrl, apiKey, line.id, label);
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'linepack-bench-durability-'));
  const dataFile = path.join(dir, 'mongo.h2');
  const inMemory = await startEmbeddedMongo();
  const fileBacked = await startEmbeddedMongo({ dataFile });
  try {
    const memory = await ingest('in memory', inMemory);
    const file = await ingest('file, durable', fileBacked);
    for (let i = 0; i < memory.length; i++)
      printTable(`Measurement ingest: durable file vs. in memory (${memory[i]!.name.split(': ')[1]})`, [memory[i]!, file[i]!]);
    console.log(`\nFile size after the run: ${((await stat(dataFile)).size / 1e6).toFixed(1)} MB (${dataFile}).`);
  } finally {
    await Promise.all([inMemory.stop(), fileBacked.stop()]);
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
