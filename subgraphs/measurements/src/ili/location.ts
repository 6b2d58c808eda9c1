import DataLoader from 'dataloader';
import type { MeasurementDocument } from '../documents';
import type { IliFeatureLocation, IliLocationMarker, IliLocationWeld, IliTallyKind } from '../generated/resolvers-types';
import type { IliTallyDocument } from './documents';
import type { IliStore } from './store';

/**
 * Where an imported ILI feature lies, as a field crew lays out a dig: its joint, the distance downstream of the girth
 * weld that starts it, and the nearest girth welds and surface-findable markers on either side, all by the run's
 * odometer. Distances are between log distances of the same run, so the odometer's drift cancels over the short span
 * a crew measures; the upstream weld is the one at or before the feature, so a feature listed at a weld's distance is
 * in the joint that starts there (as listings order them).
 */

/**
 * The tally kinds that count as markers: the ones a crew can find from the surface before excavating. Reference
 * markers (AGMs, placed by the operator to be found) and valves (at a site, above ground). Tees, bends, flanges and wall
 * changes are buried or station piping: they help align runs, not locate a dig.
 */
export const MARKER_KINDS: readonly IliTallyKind[] = ['REFERENCE_MARKER', 'VALVE'];
const WELD_KINDS: readonly IliTallyKind[] = ['GIRTH_WELD'];

/**
 * How far either side of a feature the batched query reads girth welds. Joints are 6–24 m (single and double random
 * lengths), so 50 m holds the welds on both sides even where the tool missed one; a feature with no weld within it on
 * a side (before the first weld, after the last, a long section without welds) costs one more query for that side.
 */
const WELD_WINDOW_M = 50;

export interface FeaturePosition {
  runId: string;
  logDistanceM: number;
}

/** The location without the clock position (which comes from the measurement itself). */
export type FeatureLocation = Omit<IliFeatureLocation, 'clockDeg'>;

/** Metres to the millimetre: listings give log distances to the millimetre, so differences carry float noise below it. */
const metres = (value: number) => Math.round(value * 1000) / 1000;

/** True for a feature stored by an ILI import (import-job.ts keys them `ili:<runId>:<row>`), not one recorded by hand. */
export function isImportedFeature(
  m: Pick<MeasurementDocument, 'runId' | 'idempotencyKey' | 'odometerM'>,
): m is MeasurementDocument & { runId: string; odometerM: number } {
  return m.runId != null && m.odometerM != null && typeof m.idempotencyKey === 'string' && m.idempotencyKey.startsWith(`ili:${m.runId}:`);
}

/** Index of the last item at or before x in `items` (sorted by logDistanceM); -1 when none. */
function lastAtOrBefore(items: readonly IliTallyDocument[], x: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid]!.logDistanceM <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

const weldSeen = (weld: IliTallyDocument, x: number): IliLocationWeld => ({
  jointNumber: weld.jointNumber,
  logDistanceM: weld.logDistanceM,
  distanceM: metres(Math.abs(x - weld.logDistanceM)),
});

const markerSeen = (marker: IliTallyDocument, x: number): IliLocationMarker => ({
  name: marker.name,
  kind: marker.kind as IliTallyKind,
  logDistanceM: marker.logDistanceM,
  distanceM: metres(Math.abs(x - marker.logDistanceM)),
});

/** Overlapping windows around sorted distances merged into one interval each, so a page of features is a few $or clauses. */
function windowsAround(sorted: readonly number[], halfWidth: number): [number, number][] {
  const windows: [number, number][] = [];
  for (const x of sorted) {
    const last = windows[windows.length - 1];
    if (last && x - halfWidth <= last[1]) last[1] = x + halfWidth;
    else windows.push([x - halfWidth, x + halfWidth]);
  }
  return windows;
}

/** The locations of features of one run: two queries for any number of features (plus one per side no window covers). */
async function locateOnRun(ili: IliStore, runId: string, positions: readonly number[]): Promise<FeatureLocation[]> {
  const sorted = [...new Set(positions)].sort((a, b) => a - b);
  const [welds, markers] = await Promise.all([ili.tallyWithin(runId, WELD_KINDS, windowsAround(sorted, WELD_WINDOW_M)), ili.tallyOfKinds(runId, MARKER_KINDS)]);
  return Promise.all(
    positions.map(async (x) => {
      const before = lastAtOrBefore(welds, x);
      // Every weld within the window of x was read, so a weld found inside it is the nearest; outside, ask the index.
      let upstream: IliTallyDocument | null = before >= 0 && welds[before]!.logDistanceM >= x - WELD_WINDOW_M ? welds[before]! : null;
      let downstream: IliTallyDocument | null = welds[before + 1] && welds[before + 1]!.logDistanceM <= x + WELD_WINDOW_M ? welds[before + 1]! : null;
      [upstream, downstream] = await Promise.all([
        upstream ?? ili.nearestTallyItem(runId, WELD_KINDS, x, 'upstream'),
        downstream ?? ili.nearestTallyItem(runId, WELD_KINDS, x, 'downstream'),
      ]);
      const markerBefore = lastAtOrBefore(markers, x);
      const upstreamMarker = markers[markerBefore];
      const downstreamMarker = markers[markerBefore + 1];
      return {
        runId,
        logDistanceM: x,
        jointNumber: upstream?.jointNumber ?? null,
        distanceFromUpstreamWeldM: upstream ? metres(x - upstream.logDistanceM) : null,
        upstreamWeld: upstream ? weldSeen(upstream, x) : null,
        downstreamWeld: downstream ? weldSeen(downstream, x) : null,
        upstreamMarker: upstreamMarker ? markerSeen(upstreamMarker, x) : null,
        downstreamMarker: downstreamMarker ? markerSeen(downstreamMarker, x) : null,
      };
    }),
  );
}

/**
 * Per request: every feature location asked for in one tick (a dig-list page's `_entities` request) is answered with
 * one query for the runs and two per run, whatever the number of features.
 */
export function iliLocationLoader(ili: IliStore): DataLoader<FeaturePosition, FeatureLocation | null, string> {
  return new DataLoader(
    async (keys: readonly FeaturePosition[]) => {
      const runIds = [...new Set(keys.map((key) => key.runId))];
      // A runId with no imported run (a measurement recorded by hand with a vendor's run name) has no tally to read.
      const imported = new Set((await ili.runs.find({ _id: { $in: runIds } }, { projection: { _id: 1 } }).toArray()).map((run) => run._id));
      const located = new Map<string, FeatureLocation>();
      await Promise.all(
        runIds
          .filter((runId) => imported.has(runId))
          .map(async (runId) => {
            const positions = keys.filter((key) => key.runId === runId).map((key) => key.logDistanceM);
            const locations = await locateOnRun(ili, runId, positions);
            locations.forEach((location) => located.set(positionKey(location), location));
          }),
      );
      return keys.map((key) => located.get(positionKey(key)) ?? null);
    },
    { cacheKeyFn: positionKey },
  );
}

function positionKey(position: FeaturePosition): string {
  return `${position.runId}|${position.logDistanceM}`;
}

/** The location of a measurement; null unless it is a feature of an imported run. */
export async function locationOf(
  m: MeasurementDocument,
  loader: DataLoader<FeaturePosition, FeatureLocation | null, string>,
): Promise<IliFeatureLocation | null> {
  if (!isImportedFeature(m)) return null;
  const location = await loader.load({ runId: m.runId, logDistanceM: m.odometerM });
  return location ? { ...location, clockDeg: m.clockDeg } : null;
}
