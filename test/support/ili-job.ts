import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from 'mongodb';
import type { OutboxEntry } from '@linepack/lib/events/outbox';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { JOBS_COLLECTION, JobStore, type JobDocument } from '@linepack/lib/jobs';
import { until } from '@linepack/lib/testing/until';
import type { IliRunDocument, IliUploadDocument } from '@linepack/subgraph-measurements/ili/documents';
import type { IliImportCheckpoint, IliImportInput } from '@linepack/subgraph-measurements/ili/import-job';
import { startIliImport } from '@linepack/subgraph-measurements/ili/start-import';
import type { IliStore } from '@linepack/subgraph-measurements/ili/store';

/**
 * ILI import jobs driven in a test's own process against the real database, as the measurements subgraph drives them
 * for a client (the gateway's part is tested in test/domain/ili-import.test.ts).
 */

export type IliImportJobDocument = JobDocument<IliImportInput, IliImportCheckpoint>;

/** The listing's rows as the CSV a vendor sends, written in `dir`: its bytes. */
export async function listingCsv(dir: string, rows: Parameters<typeof writePofListingCsv>[0]): Promise<Buffer> {
  const file = path.join(dir, `${randomBytes(4).toString('hex')}.csv`);
  await writePofListingCsv(rows, file);
  return readFile(file);
}

/** `bytes` stored as an upload in parts of `partBytes`, announced with `sha256` (by default: the bytes' own). */
export async function storeUpload(
  ili: IliStore,
  bytes: Buffer,
  partBytes: number,
  sha256 = createHash('sha256').update(bytes).digest('hex'),
): Promise<IliUploadDocument> {
  const doc = await ili.createUpload({ fileName: 'run-a.csv', format: 'CSV', sizeBytes: bytes.length, sha256 });
  for (let index = 0, offset = 0; offset < bytes.length; index++, offset += partBytes)
    await ili.appendPart(doc._id, index, bytes.subarray(offset, offset + partBytes));
  return (await ili.upload(doc._id))!;
}

/** The upload's import queued (or, started again with the same key, answered with the first) as startIliImport does. */
export function queueImport(db: Db, ili: IliStore, uploadId: string, assetId: string, runDate: string) {
  return startIliImport(
    { uploadId, assetId, run: { vendor: 'Synthetic ILI Co.', toolTechnologies: ['MFL'], runDate: new Date(`${runDate}T00:00:00Z`) } },
    { ili, jobs: new JobStore(db), assetRefs: null },
  );
}

/** The job once it has ended (`ended`: by default SUCCEEDED or FAILED), or as last seen after two minutes. */
export function endedJob(db: Db, jobId: string, ended = (job: IliImportJobDocument) => job.state === 'SUCCEEDED' || job.state === 'FAILED') {
  return until(
    () => db.collection<IliImportJobDocument>(JOBS_COLLECTION).findOne({ _id: jobId }),
    (job) => job !== null && ended(job),
    120_000,
    50,
  );
}

/** The types of the events a run queued, in order. */
export const outboxTypes = (run: IliRunDocument | null): string[] => (run?.outbox ?? []).map((e: OutboxEntry) => e.type);
