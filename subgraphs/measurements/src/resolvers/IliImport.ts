import type { IliImportResolvers } from '../generated/resolvers-types';

export const IliImport: IliImportResolvers = {
  id: (job) => job._id,
  counts: (job) => ({
    rows: job.counts['rows'] ?? 0,
    features: job.counts['features'] ?? 0,
    tallyItems: job.counts['tallyItems'] ?? 0,
    rejectedRows: job.counts['rejectedRows'] ?? 0,
  }),
  // job.errors holds MAX_KEPT_ERRORS (lib/jobs.ts) at most, so `first` needs no upper bound of its own.
  errors: (job, { first }) => job.errors.slice(0, Math.max(0, first ?? 100)),
  run: async (job, _args, { ili }) => {
    const run = await ili.run(job.input.runId);
    if (!run) throw new Error(`import ${job._id}: its run ${job.input.runId} is not stored`);
    return run;
  },
  fileName: (job) => job.input.fileName,
};
