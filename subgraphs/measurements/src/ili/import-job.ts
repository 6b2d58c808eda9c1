import type { Db } from 'mongodb';
import { ILI_RUN_FAILED, ILI_RUN_IMPORTED, ILI_RUN_STARTED } from '../events';
import { isDatabaseUnavailable } from '@linepack/lib/errors';
import { outboxEntry } from '@linepack/lib/events/outbox';
import { heavyWork } from '@linepack/lib/fair-share';
import { insertKeepingDuplicates } from '@linepack/lib/mongo';
import { TALLY_KINDS, validateMappingProfile, type IliListingRow, type MappedField, type ValidMappingProfile } from '@linepack/lib/ili/listing';
import { ListingHeaderError, parseListing, type PipeDimensions } from '@linepack/lib/ili/parse';
import { MAX_KEPT_ERRORS, type JobHandler, type JobItemError, type JobOutcome } from '@linepack/lib/jobs';
import { MeasurementRepository } from '../repository';
import { validateBatch } from '../validation';
import { ALIGNMENT_TALLY_KINDS, iliRunEventFields, type IliTallyDocument } from './documents';
import { rowError } from './preview';
import { IliStore } from './store';
import { listingFormatOf } from './upload-checks';

export const ILI_IMPORT_JOB = 'ILI_IMPORT';

/** What startIliImport records on the job: everything the import needs, so a resumed job needs nothing else. */
export interface IliImportInput extends Record<string, unknown> {
  uploadId: string;
  fileName: string;
  runId: string;
  assetId: string;
  profile: Record<string, unknown>;
  pipe: PipeDimensions;
  runDate: string;
}

export interface IliImportCheckpoint extends Record<string, unknown> {
  /** Batches of the listing whose features and tally are durably written (pass 2); the next resumes after them. */
  batchesWritten: number;
  rows: number;
  features: number;
  tallyItems: number;
}

/** Measurement fields a feature row fills, and the profile column each comes from (to name a rejected cell). */
const FIELD_COLUMNS: Record<string, MappedField> = {
  odometerM: 'logDistance',
  clockDeg: 'clock',
  depthPctWt: 'depth',
  lengthMm: 'length',
  widthMm: 'width',
  dentDepthPctOd: 'dentDepth',
  surface: 'surface',
};

/** A feature row as the ILI_ANOMALY measurement it is stored as: keyed by run and row, so writing it twice stores it once. */
function featureItem(row: IliListingRow, input: IliImportInput): Record<string, unknown> {
  const item: Record<string, unknown> = {
    idempotencyKey: `ili:${input.runId}:${row.rowNumber}`,
    assetId: input.assetId,
    type: 'ILI_ANOMALY',
    observedAt: new Date(input.runDate),
    source: 'ILI',
    runId: input.runId,
    featureType: row.kind,
    odometerM: row.logDistanceM,
  };
  const optional: Record<string, unknown> = {
    clockDeg: row.clockDeg,
    depthPctWt: row.depthPctWt,
    lengthMm: row.lengthMm,
    widthMm: row.widthMm,
    surface: row.surface,
    ...(row.kind === 'DENT' ? { dentDepthPctOd: row.dentDepthPctOd } : {}),
  };
  for (const [field, value] of Object.entries(optional)) if (value != null) item[field] = value;
  return item;
}

function tallyDocument(row: IliListingRow, input: IliImportInput, tenantId: string): IliTallyDocument {
  return {
    _id: `${input.runId}:${row.rowNumber}`,
    tenantId,
    runId: input.runId,
    kind: row.kind,
    logDistanceM: row.logDistanceM,
    jointNumber: row.jointNumber,
    jointLengthM: row.jointLengthM,
    wallThicknessMm: row.wallThicknessMm,
    name: row.markerName,
    rowNumber: row.rowNumber,
  };
}

/** The rows of a batch a measurement would refuse, as row errors naming the profile's column. */
function featureErrors(features: readonly IliListingRow[], input: IliImportInput, profile: ValidMappingProfile): JobItemError[] {
  if (features.length === 0) return [];
  const { violations } = validateBatch(features.map((row) => featureItem(row, input)));
  return violations.map((v) => {
    const match = /^input\[(\d+)\]\.?(\w+)?/.exec(v.field);
    const row = features[Number(match?.[1] ?? 0)]!;
    const field = match?.[2] ?? null;
    const mapped = field ? FIELD_COLUMNS[field] : undefined;
    const column = mapped ? ((profile.columns as Record<string, string | undefined>)[mapped] ?? mapped) : field;
    return { rowNumber: row.rowNumber, column, rule: v.message, value: null };
  });
}

/**
 * Marks the run COMPLETE and, in the same single-document write, queues ili.run.imported with the tally rows alignment
 * needs (analytics cannot read this database). A resumed job that finds the run COMPLETE already queues nothing again.
 */
async function completeRun(store: IliStore, runId: string, girthWelds: number): Promise<void> {
  const run = await store.run(runId);
  if (!run || run.status === 'COMPLETE') return;
  const tally = await store.tally
    .find(
      { runId, kind: { $in: [...ALIGNMENT_TALLY_KINDS] } },
      { projection: { _id: 0, rowNumber: 1, kind: 1, logDistanceM: 1, jointNumber: 1, jointLengthM: 1, wallThicknessMm: 1, name: 1 } },
    )
    .toArray();
  const event = outboxEntry(ILI_RUN_IMPORTED, {
    ...iliRunEventFields(run),
    featureCount: run.featureCount,
    tally: tally.map(({ rowNumber, kind, logDistanceM, jointNumber, jointLengthM, wallThicknessMm, name }) => ({
      rowNumber,
      kind,
      logDistanceM,
      jointNumber,
      jointLengthM,
      wallThicknessMm,
      name,
    })),
  });
  await store.runs.updateOne(
    { _id: runId, status: { $ne: 'COMPLETE' } },
    { $set: { status: 'COMPLETE', girthWeldCount: girthWelds }, $push: { outbox: event } as never },
  );
}

/**
 * Marks the run FAILED and queues ili.run.failed in the same write, so a consumer holding the run's features for its
 * comparison assesses those already written instead of waiting for a run that will not complete.
 */
async function failRun(store: IliStore, input: IliImportInput, failure: string, featuresWritten: number): Promise<void> {
  const event = outboxEntry(ILI_RUN_FAILED, { id: input.runId, assetId: input.assetId, failure, featuresWritten });
  await store.runs.updateOne({ _id: input.runId, status: { $ne: 'COMPLETE' } }, { $set: { status: 'FAILED' }, $push: { outbox: event } as never });
}

/**
 * An ILI listing import in two passes over the stored file. Pass 1 reads every row and checks it (the listing's rules,
 * then the rules every measurement obeys) while hashing the bytes it reads against the announced SHA-256: a wrong hash
 * or any rejected row fails the import — with all of the rows — and nothing is stored. Pass 2 reads it again and
 * writes each batch's features (as measurements) and tally, committing after each batch; a resumed job skips the
 * batches committed. Every write is keyed by run and row, so the batch a crash cut short is written again without
 * duplicates. A database outage pauses the job (the runner takes it up again from its checkpoint, lib/jobs.ts). A pass
 * 2 that stops on any other error marks the run FAILED (ili.run.failed: the features it wrote are assessed
 * one by one) and leaves the job resumable: starting it again with the same key carries on from its checkpoint.
 */
export function iliImportHandler(db: Db): JobHandler<IliImportInput, IliImportCheckpoint> {
  return {
    async run(job, commit, signal): Promise<JobOutcome> {
      const input = job.input;
      const store = new IliStore(db, job.tenantId);
      const measurements = new MeasurementRepository(db, job.tenantId);
      const fail = async (failure: string, counts?: Record<string, number>): Promise<JobOutcome> => {
        await failRun(store, input, failure, 0);
        return { state: 'FAILED', failure, ...(counts ? { counts } : {}) };
      };
      const upload = await store.upload(input.uploadId);
      if (!upload) return fail('the uploaded file is no longer stored');
      const profile = validateMappingProfile(input.profile);
      const format = listingFormatOf(upload);

      let checkpoint = job.checkpoint;
      if (!checkpoint) {
        const errors: JobItemError[] = [];
        let errorCount = 0;
        let rows = 0;
        let features = 0;
        let tallyItems = 0;
        const { stream, verify } = store.hashedRead(upload);
        let headerError: string | null = null;
        try {
          for await (const batch of parseListing(stream, format, profile, input.pipe)) {
            if (signal.aborted) throw new Error('stopping');
            const featureRows = batch.rows.filter((row) => !TALLY_KINDS.has(row.kind));
            const rejected: JobItemError[] = [...batch.rejected.map(rowError), ...featureErrors(featureRows, input, profile)];
            rows += batch.rows.length + new Set(batch.rejected.map((e) => e.rowNumber)).size;
            features += featureRows.length;
            tallyItems += batch.rows.length - featureRows.length;
            errorCount += rejected.length;
            if (errors.length < MAX_KEPT_ERRORS) errors.push(...rejected.slice(0, MAX_KEPT_ERRORS - errors.length));
            await commit({ checkpoint: null, progress: { done: rows, total: null, phase: 'checking rows' }, errors, errorCount });
          }
        } catch (err) {
          if (!(err instanceof ListingHeaderError)) throw err;
          headerError = err.message;
        }
        // Bytes that are not the file announced explain a refused header or rows better than the header or rows do.
        const integrity = await verify();
        if (integrity) return fail(integrity);
        if (headerError) return fail(headerError);
        const counts = { rows, features: 0, tallyItems: 0, rejectedRows: new Set(errors.map((e) => e.rowNumber)).size };
        if (errorCount > 0) {
          errors.sort((a, b) => a.rowNumber - b.rowNumber);
          await commit({ checkpoint: null, progress: { done: rows, total: rows, phase: 'rejected' }, errors, errorCount, counts });
          return fail(`${errorCount} ${errorCount === 1 ? 'value was' : 'values were'} rejected in ${counts.rejectedRows} rows; nothing was stored`, counts);
        }
        checkpoint = { batchesWritten: 0, rows, features: 0, tallyItems: 0 };
        await store.runs.updateOne({ _id: input.runId }, { $set: { featureCount: features, tallyItemCount: tallyItems } });
        await commit({ checkpoint, progress: { done: 0, total: rows, phase: 'writing' }, counts: { rows, features: 0, tallyItems: 0, rejectedRows: 0 } });
      } else {
        const run = await store.run(input.runId);
        // Its runner died (or lost the database) after the last batch, with the run COMPLETE, before it recorded the
        // outcome: everything is written, and the stored file may be gone already. Done, nothing written again.
        if (run?.status === 'COMPLETE') {
          await store.deleteUploadParts(upload._id);
          const { rows, features, tallyItems } = checkpoint;
          return { state: 'SUCCEEDED', counts: { rows, features, tallyItems, rejectedRows: 0 } };
        }
        // Resumed after a failure: the run is importing again, and analytics holds its features for the comparison again.
        if (run?.status === 'FAILED')
          await store.runs.updateOne(
            { _id: input.runId, status: 'FAILED' },
            { $set: { status: 'IMPORTING' }, $push: { outbox: outboxEntry(ILI_RUN_STARTED, iliRunEventFields(run)) } as never },
          );
      }

      let batchIndex = 0;
      let rowsRead = 0;
      let girthWelds = 0;
      const state = { ...checkpoint };
      try {
        for await (const batch of parseListing(store.fileStream(upload), format, profile, input.pipe)) {
          if (signal.aborted) throw new Error('stopping');
          girthWelds += batch.rows.filter((row) => row.kind === 'GIRTH_WELD').length;
          rowsRead += batch.rows.length + new Set(batch.rejected.map((e) => e.rowNumber)).size;
          if (batchIndex++ < state.batchesWritten) continue;
          const featureRows = batch.rows.filter((row) => !TALLY_KINDS.has(row.kind));
          const tallyRows = batch.rows.filter((row) => TALLY_KINDS.has(row.kind));
          if (featureRows.length > 0) {
            const { items } = validateBatch(featureRows.map((row) => featureItem(row, input)));
            await measurements.record(items);
          }
          if (tallyRows.length > 0) {
            // A resumed batch: the items written before the crash are refused as duplicates, the rest are stored.
            // A stopping runner leaves the queue (and a rest) at once: the batch is written again on resumption.
            await heavyWork.run(
              job.tenantId,
              () =>
                insertKeepingDuplicates(
                  store.tally.collection,
                  tallyRows.map((row) => tallyDocument(row, input, job.tenantId)),
                ),
              signal,
            );
          }
          state.batchesWritten = batchIndex;
          state.features += featureRows.length;
          state.tallyItems += tallyRows.length;
          const done = Math.min(state.rows, rowsRead);
          await commit({
            checkpoint: state,
            progress: { done, total: state.rows, phase: 'writing' },
            counts: { rows: state.rows, features: state.features, tallyItems: state.tallyItems, rejectedRows: 0 },
          });
        }
      } catch (err) {
        // Stopping (or a lost lease) is not a failure, nor is a database outage: the job stays RUNNING and is resumed
        // (lib/jobs.ts), the run IMPORTING. Anything else fails it.
        if (!signal.aborted && !isDatabaseUnavailable(err))
          await failRun(store, input, 'the import stopped on an internal error while writing', state.features);
        throw err;
      }
      await completeRun(store, input.runId, girthWelds);
      await store.deleteUploadParts(upload._id);
      return { state: 'SUCCEEDED', counts: { rows: state.rows, features: state.features, tallyItems: state.tallyItems, rejectedRows: 0 } };
    },
  };
}
