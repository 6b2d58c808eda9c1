import { pageSize } from '@linepack/lib/pagination';
import type { IliRunComparisonResolvers } from '../generated/resolvers-types';

export const IliRunComparison: IliRunComparisonResolvers = {
  olderRun: (comparison) => (comparison.olderRunId ? { id: comparison.olderRunId } : null),
  unityPlot: (comparison, { first, after }, { iliRuns }) => iliRuns.unityPlot(comparison, pageSize(first), after),
};
