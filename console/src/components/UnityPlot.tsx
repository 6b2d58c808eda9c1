import type { IliRunSummary } from './AlongTheLine';

/** The unity plot of two runs of the asset (IliRun.comparison.unityPlot); drawn once the API serves it. */
export function UnityPlot({ runs, current }: { runs: IliRunSummary[]; current: IliRunSummary }) {
  if (runs.length < 2 || !current) return null;
  return null;
}
