import { z } from 'zod';
import { ILI_RUN_STARTED } from '../events';
import { outboxEntry } from '@linepack/lib/events/outbox';
import { validateMappingProfile } from '@linepack/lib/ili/listing';
import type { JobStore } from '@linepack/lib/jobs';
import { invalidInput, violationsOf, type Violation } from '@linepack/lib/validation';
import type { AssetRefs } from '../asset-refs';
import { iliRunEventFields, type IliImportJob } from './documents';
import { ILI_IMPORT_JOB, type IliImportInput } from './import-job';
import type { IliStore } from './store';
import { checkUploadSources, needsDimensions, pipeOf } from './upload-checks';

const runInput = z.object({
  vendor: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
  toolTechnologies: z.array(z.string()).min(1, 'name at least one technology'),
  runDate: z.date(),
  toolTolerancePctWt: z.number().min(0, 'must be 0–50 % of wall').max(50, 'must be 0–50 % of wall').nullish(),
  certaintyPct: z.number().min(50, 'must be 50–100 %').max(100, 'must be 50–100 %').nullish(),
  discoveredAt: z.date().nullish(),
});

export interface StartIliImportArgs {
  uploadId: string;
  assetId: string;
  profileId?: string | null;
  run: z.input<typeof runInput>;
}

/**
 * Starts an import: checks what can be checked before any row is read (the upload, the asset, the profile, the
 * run's dates), records the run as IMPORTING and queues the job. The job's key is the file's SHA-256, the asset
 * and the run date: the same file imported again for the same run answers with the first import.
 */
export async function startIliImport(
  args: StartIliImportArgs,
  { ili, jobs, assetRefs, now = new Date() }: { ili: IliStore; jobs: JobStore; assetRefs: AssetRefs | null; now?: Date },
): Promise<IliImportJob> {
  const violations: Violation[] = [];
  const run = runInput.safeParse(args.run);
  if (!run.success) violations.push(...violationsOf(run.error, 'input.run'));
  const { upload, profile, dimensions } = await checkUploadSources(
    { uploadId: args.uploadId, profileId: args.profileId, assetId: args.assetId },
    { ili, assetRefs },
    'input.',
    violations,
  );
  if (run.success) {
    const { runDate, discoveredAt } = run.data;
    if (runDate > now) violations.push({ field: 'input.run.runDate', message: 'must not be in the future' });
    if (discoveredAt && discoveredAt < runDate) violations.push({ field: 'input.run.discoveredAt', message: 'must not be before the run date' });
    if (discoveredAt && discoveredAt > now) violations.push({ field: 'input.run.discoveredAt', message: 'must not be in the future' });
  }
  const definition = profile ? validateMappingProfile(profile.definition) : null;
  if (definition !== null && needsDimensions(definition) && dimensions && (dimensions.wallThicknessMm == null || dimensions.outsideDiameterMm == null))
    violations.push({
      field: 'input.profileId',
      message: 'the profile gives depths in mm or inches, and the asset has no wallThicknessMm and outsideDiameterMm to convert them with',
    });
  if (violations.length > 0 || !run.success || !upload || !profile) throw invalidInput(violations);

  const runId = ili.newRunId();
  const runDate = run.data.runDate;
  const input: IliImportInput = {
    uploadId: upload._id,
    fileName: upload.fileName,
    runId,
    assetId: args.assetId,
    profile: definition as unknown as Record<string, unknown>,
    // Placeholders of 1 are never used: the profile's depths are in % (needsDimensions above).
    pipe: pipeOf(dimensions),
    runDate: runDate.toISOString(),
  };
  const key = `${upload.sha256}:${args.assetId}:${input.runDate}`;
  const { job, created } = await jobs.start(ili.tenantId, ILI_IMPORT_JOB, key, input);
  if (!created) {
    // The same file again: the first import answers; this upload's bytes are not needed.
    if (job.input.uploadId !== upload._id) await ili.deleteUploadParts(upload._id);
    return job as IliImportJob;
  }
  const fields = {
    _id: runId,
    assetId: args.assetId,
    runDate,
    toolTolerancePctWt: run.data.toolTolerancePctWt ?? null,
    certaintyPct: run.data.certaintyPct ?? 80,
    discoveredAt: run.data.discoveredAt ?? runDate,
  };
  await ili.runs.insertOne({
    ...fields,
    vendor: run.data.vendor,
    toolTechnologies: run.data.toolTechnologies as never,
    status: 'IMPORTING',
    featureCount: 0,
    tallyItemCount: 0,
    girthWeldCount: 0,
    importId: job._id,
    createdAt: now,
    // Analytics holds the run's features as they arrive rather than assessing each against the odometer alone.
    outbox: [outboxEntry(ILI_RUN_STARTED, iliRunEventFields(fields))],
  });
  return job as IliImportJob;
}
