/**
 * How probable it is that an anomaly, as inspected, is already at or beyond its acceptance limit: the depth at which its
 * safe pressure falls to MAOP (the remaining-life limit, growth.ts acceptanceLimit), or 80 % of wall. The ILI tool
 * sizes depth with an error taken as normal, σ = tolerance / z((1 + certainty) / 2) — a tool specified ±10 % of wall at
 * 80 % certainty has σ = 7.8 % of wall (API 1163's way of stating sizing accuracy; matching.ts depthSizingSd) — so
 *   P = 1 − Φ((d_limit − d_reported) / σ).
 * A field measurement has no sizing error here: P is 0 or 1. The category is decided conservatively (the reported depth
 * plus the whole tolerance); this is the central estimate beside it. Summed over a segment's open anomalies it is the
 * expected number beyond their limit — a measure finer than the 5 × 5 score that every repair of such an anomaly lowers.
 */

/**
 * Φ, the standard normal distribution function, from the error function by Abramowitz & Stegun 7.1.26 (|error| of erf
 * below 1.5 × 10⁻⁷): Φ(x) = ½(1 + erf(x / √2)).
 */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/** P(true depth ≥ limitMm) for a depth reported as reportedMm with sizing error sdMm (0: measured exactly). */
export function exceedanceProbability(reportedMm: number, limitMm: number, sdMm: number): number {
  if (!(sdMm > 0)) return reportedMm >= limitMm ? 1 : 0;
  return 1 - normalCdf((limitMm - reportedMm) / sdMm);
}
