import type { IliRunResolvers } from '../generated/resolvers-types';

export const IliRun: IliRunResolvers = {
  __resolveReference: (reference) => ({ id: reference.id }),
  comparison: (run, _args, { iliRuns }) => iliRuns.comparison(run.id),
};
