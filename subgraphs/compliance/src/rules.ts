/**
 * What the subgraph needs of the rule engine in domain/ (the obligation catalogue with the
 * regulation's words and sections, and the calendar evaluation): applicability over an asset's
 * lineage, and evaluations shaped for the projections and the API.
 */
import type { AssetProjection, ComplianceState, RegulationCode } from './documents';
import { daysBetween } from './domain/calendar';
import { longestAllowedGapDays, worstState as worstOf } from './domain/evaluate';
import { catalogue, obligationsFor as domainObligationsFor, withInheritedAttributes, type AssetAttributes, type ObligationId } from './domain/obligations';

export interface ObligationEvaluation {
  state: ComplianceState;
  lastCompletedAt: Date | null;
  /** The last on-time day (00:00Z); null with no record. */
  dueAt: Date | null;
  violations: { rule: string; brokenAt: Date }[];
}

export interface ApplicableObligation {
  obligation: ObligationId;
  regulation: RegulationCode;
  regulationRef: string;
  /** The timing that applies to this asset, in the regulation's words. */
  rule: string;
  evidenceTypes: readonly string[];
  evidenceFromAncestors: boolean;
  /** Readings at the pipe's CP test points count (CP surveys). */
  evidenceFromTestPoints: boolean;
  evaluate(completions: readonly Date[], asOf: Date, dueSoonDays: number): ObligationEvaluation;
}

/** Every measurement or inspection record type that completes some obligation. */
export const evidenceTypes: ReadonlySet<string> = new Set(catalogue().flatMap((o) => o.evidenceTypes));

export function obligationCatalogue(regulation: RegulationCode | null) {
  return catalogue(regulation).map((o) => ({
    obligation: o.obligation,
    regulation: o.regulation,
    regulationRef: o.regulationRef,
    title: o.title,
    interval: o.interval,
    maxIntervalDays: Math.max(...o.variants.map((v) => longestAllowedGapDays(v.timing))),
    appliesTo: o.appliesTo,
    evidenceTypes: [...o.evidenceTypes],
    evidenceFromAncestors: o.evidenceFromAncestors,
    evidenceFromTestPoints: o.evidenceFromTestPoints === true,
  }));
}

const attributesOf = (a: AssetProjection): AssetAttributes => ({
  type: a.type,
  status: a.status,
  regulation: a.regulation,
  classLocation: a.classLocation,
  inHca: a.inHca,
  couldAffectHca: a.couldAffectHca,
  cathodicallyProtected: a.cathodicallyProtected,
  atmosphericExposure: a.atmosphericExposure,
  offshore: a.offshore,
  gasOdorized: a.gasOdorized,
  crossing: a.crossing,
});

/** The obligations of the first asset of the lineage (the asset, then its ancestors nearest first). */
export function obligationsFor(lineage: readonly AssetProjection[]): ApplicableObligation[] {
  const [asset, ...ancestors] = lineage;
  if (!asset) return [];
  const effective = withInheritedAttributes(attributesOf(asset), ancestors.map(attributesOf));
  return domainObligationsFor(effective).map((o) => ({
    obligation: o.obligation,
    regulation: o.regulation,
    regulationRef: o.regulationRef,
    rule: o.timing.words,
    evidenceTypes: o.evidenceTypes,
    evidenceFromAncestors: o.evidenceFromAncestors,
    evidenceFromTestPoints: o.evidenceFromTestPoints === true,
    evaluate: (completions, asOf, dueSoonDays) => {
      const e = o.evaluate(completions, asOf, dueSoonDays);
      return {
        state: e.state,
        lastCompletedAt: e.lastCompletedAt,
        dueAt: e.dueAt,
        violations: e.violations.map((v) => ({ rule: v.rule, brokenAt: v.brokenAt })),
      };
    },
  }));
}

/** The state a stored due date gives at `asOf`: the same arithmetic as the evaluation (see domain/evaluate.ts). */
export function stateAt(dueAt: Date | null, asOf: Date, dueSoonDays: number): ComplianceState {
  if (!dueAt) return 'NO_RECORD';
  const daysLeft = daysBetween(asOf, dueAt);
  if (daysLeft < 0) return 'OVERDUE';
  return daysLeft <= dueSoonDays ? 'DUE_SOON' : 'OK';
}

export const worstState = (states: readonly ComplianceState[]): ComplianceState => worstOf(states);
