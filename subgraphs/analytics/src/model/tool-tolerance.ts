/**
 * ILI tool tolerance: MFL tools are typically specified as ±10 % of wall at 80 % certainty (API 1163
 * performance specifications). Linepack adds the tolerance to the reported depth before assessing,
 * capped at 100 %, so the assessment does not rely on the tool reading low; the tenant's setting replaces
 * the 10 % default with its tool's specification. (Scaling the tolerance to another certainty level is
 * left to the operator's choice of setting.)
 */
export const DEFAULT_TOOL_TOLERANCE_PCT_WT = 10;

export function depthWithTolerance(depthPctWt: number, tolerancePctWt: number = DEFAULT_TOOL_TOLERANCE_PCT_WT): number {
  return Math.min(100, depthPctWt + tolerancePctWt);
}
