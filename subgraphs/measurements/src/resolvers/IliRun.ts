import type { IliRunResolvers } from '../generated/resolvers-types';

export const IliRun: IliRunResolvers = {
  __resolveReference: (reference, { ili }) => ili.run(reference.id),
  id: (run) => run._id,
  asset: (run) => ({ id: run.assetId }),
  tally: (run, { kinds, first, after }, { ili }) => ili.tallyPage(run._id, kinds, first, after),
  import: (run, _args, { jobs, ili }) => jobs.get(ili.tenantId, run.importId) as never,
};
