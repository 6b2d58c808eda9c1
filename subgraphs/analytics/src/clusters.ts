import { clusterFeatures, type InteractionRule, type MetalLossFeature } from './model/interaction';
import type { AnomalyProjection, AssetProjection } from './documents';

/**
 * Which metal-loss anomalies of one run interact, under the tenant's interaction rule (model/interaction.ts cites
 * each rule), and the box each cluster is assessed as. A member of a cluster is assessed as the cluster: the box's
 * length at the deepest member's depth, so every member carries the cluster's failure pressure and category and the
 * dig list can show the cluster once, by its deepest member (the lead).
 *
 * Anomalies of different runs never cluster (they are the same corrosion seen twice), and an anomaly without a clock
 * position or a length cannot be placed against its neighbours: it is simply assessed alone.
 */
export interface ClusterMembership {
  /** The deepest member's measurement id: the cluster's name on the dig list and dig sheet. */
  leadId: string;
  memberIds: string[];
  rule: InteractionRule['name'];
  /** The box: from the first member's upstream end to the last member's downstream end, mm. */
  lengthMm: number;
  /** The covering arc at the outside diameter, mm. */
  widthMm: number;
  /** The deepest member's reported depth, % of wall (the box is assessed at it, as Modified B31G assumes). */
  maxDepthPctWt: number;
}

/** Only metal loss clusters: a gouge, dent or crack is a different threat with its own repair condition. */
const CLUSTERED_FEATURES = new Set(['METAL_LOSS', null]);

/** The run an anomaly belongs to: its imported run, else the day it was observed (hand-recorded runs). */
export const runKeyOf = (a: Pick<AnomalyProjection, 'runId' | 'observedAt'>): string => a.runId ?? a.observedAt.toISOString().slice(0, 10);

/**
 * The clusters of more than one member among `anomalies` (any mix of runs of one asset), keyed by member id. Lone
 * anomalies are absent: they are assessed on their own dimensions.
 */
export type ClusterableAnomaly = Pick<
  AnomalyProjection,
  '_id' | 'runId' | 'observedAt' | 'featureType' | 'odometerM' | 'stationM' | 'clockDeg' | 'depthPctWt' | 'lengthMm' | 'widthMm'
>;

export function clustersOf(
  asset: Pick<AssetProjection, 'outsideDiameterMm' | 'wallThicknessMm'>,
  anomalies: readonly ClusterableAnomaly[],
  rule: InteractionRule,
): Map<string, ClusterMembership> {
  const memberships = new Map<string, ClusterMembership>();
  const od = asset.outsideDiameterMm;
  const t = asset.wallThicknessMm;
  if (od == null || t == null || !(od > 0) || !(t > 0)) return memberships;
  const byRun = new Map<string, ClusterableAnomaly[]>();
  for (const a of anomalies) {
    if (!CLUSTERED_FEATURES.has(a.featureType) || a.depthPctWt == null || a.lengthMm == null || a.clockDeg == null) continue;
    if (a.odometerM == null && a.stationM == null) continue;
    const key = runKeyOf(a);
    (byRun.get(key) ?? byRun.set(key, []).get(key)!).push(a);
  }
  for (const runAnomalies of byRun.values()) {
    if (runAnomalies.length < 2) continue;
    const depthPct = new Map(runAnomalies.map((a) => [a._id, a.depthPctWt!]));
    const features: MetalLossFeature[] = runAnomalies.map((a) => ({
      id: a._id,
      // The reported position is the feature's upstream end (POF 100 "log distance" of a feature's start).
      axialStartMm: (a.odometerM ?? a.stationM)! * 1000,
      axialLengthMm: a.lengthMm!,
      clockDeg: a.clockDeg!,
      widthMm: a.widthMm ?? 0,
      depthMm: (a.depthPctWt! / 100) * t,
    }));
    for (const cluster of clusterFeatures(features, { outsideDiameterMm: od, wallThicknessMm: t }, rule)) {
      if (cluster.memberIds.length < 2) continue;
      // Deepest first; ties go to the lowest id so that the lead is the same whatever order the anomalies came in.
      const leadId = [...cluster.memberIds].sort((x, y) => depthPct.get(y)! - depthPct.get(x)! || (x < y ? -1 : 1))[0]!;
      const membership: ClusterMembership = {
        leadId,
        memberIds: [...cluster.memberIds].sort(),
        rule: rule.name,
        lengthMm: cluster.axialLengthMm,
        widthMm: cluster.widthMm,
        maxDepthPctWt: depthPct.get(leadId)!,
      };
      for (const id of cluster.memberIds) memberships.set(id, membership);
    }
  }
  return memberships;
}

/** The note an assessed cluster member carries, so a reviewer sees why its figures are not its own dimensions. */
export function clusterNote(c: ClusterMembership): string {
  return (
    `assessed as a cluster of ${c.memberIds.length} interacting anomalies (${c.rule} rule): ` +
    `${c.lengthMm.toFixed(0)} mm long at the deepest member's ${c.maxDepthPctWt.toFixed(1)} % of wall (lead ${c.leadId})`
  );
}
