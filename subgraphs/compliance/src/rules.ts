/**
 * What the subgraph needs of the rule engine in domain/ (the obligation catalogue with the
 * regulation's words and sections, and the calendar evaluation): applicability over an asset's
 * lineage, and evaluations shaped for the projections and the API.
 */
import type { AssetProjection, ComplianceState, RegulationCode } from './documents';
import { daysBetween, localDay } from './domain/calendar';
import { longestAllowedGapDays, worstState as worstOf, type ComplianceState as EvaluatedState } from './domain/evaluate';
import {
  carriesObligations,
  catalogue,
  obligationsFor as domainObligationsFor,
  obligationsOnceInService as domainObligationsOnceInService,
  withInheritedAttributes,
  type ApplicableObligation as DomainApplicableObligation,
  type AssetAttributes,
  type ObligationId,
} from './domain/obligations';

export interface ObligationEvaluation {
  /** Evaluated obligations are in one of OK, DUE_SOON, OVERDUE, NO_RECORD. */
  state: EvaluatedState;
  lastCompletedAt: Date | null;
  /** The last on-time calendar day in the evaluation's time zone (00:00Z of that date); null with no record. */
  dueAt: Date | null;
  violations: { rule: string; brokenAt: Date }[];
}

export interface ApplicableObligation {
  obligation: ObligationId;
  regulation: RegulationCode;
  regulationRef: string;
  /** The timing that applies to this asset, in the regulation's words. */
  rule: string;
  /** Why that timing applies to this asset (the variant, e.g. an unknown class taking the strictest row). */
  explanation: string;
  evidenceTypes: readonly string[];
  evidenceFromAncestors: boolean;
  /** Readings at the pipe's CP test points count (CP surveys). */
  evidenceFromTestPoints: boolean;
  /** Evaluates with calendar days of `timeZone` (IANA). */
  evaluate(completions: readonly Date[], asOf: Date, dueSoonDays: number, timeZone: string): ObligationEvaluation;
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

/** The asset (first of the lineage) with what it inherits from its ancestors (nearest first). */
function effectiveAttributes(lineage: readonly AssetProjection[]): AssetAttributes | null {
  const [asset, ...ancestors] = lineage;
  return asset ? withInheritedAttributes(attributesOf(asset), ancestors.map(attributesOf)) : null;
}

function shaped(o: DomainApplicableObligation, explanation: string): ApplicableObligation {
  return {
    obligation: o.obligation,
    regulation: o.regulation,
    regulationRef: o.regulationRef,
    rule: o.timing.words,
    explanation,
    evidenceTypes: o.evidenceTypes,
    evidenceFromAncestors: o.evidenceFromAncestors,
    evidenceFromTestPoints: o.evidenceFromTestPoints === true,
    evaluate: (completions, asOf, dueSoonDays, timeZone) => {
      const e = o.evaluate(completions, asOf, dueSoonDays, { timeZone });
      return {
        state: e.state,
        lastCompletedAt: e.lastCompletedAt,
        dueAt: e.dueAt,
        violations: e.violations.map((v) => ({ rule: v.rule, brokenAt: v.brokenAt })),
      };
    },
  };
}

/** The obligations of the first asset of the lineage (the asset, then its ancestors nearest first). */
export function obligationsFor(lineage: readonly AssetProjection[]): ApplicableObligation[] {
  const effective = effectiveAttributes(lineage);
  return effective ? domainObligationsFor(effective).map((o) => shaped(o, `${o.variant} (${o.regulationRef})`)) : [];
}

/** What a PLANNED asset will owe once in service (none for other statuses); not evaluated, nothing runs yet. */
export function obligationsOnceInService(lineage: readonly AssetProjection[]): ApplicableObligation[] {
  const effective = effectiveAttributes(lineage);
  if (!effective) return [];
  return domainObligationsOnceInService(effective).map((o) =>
    shaped(o, `not in service (PLANNED): nothing is owed until the asset begins operation; then ${o.variant} (${o.regulationRef})`),
  );
}

/** True when the asset's status carries no obligation now (PLANNED, ABANDONED or unknown). */
export const notInService = (asset: AssetProjection): boolean => !carriesObligations(asset);

/**
 * The state a stored due day gives at `asOf`: the same arithmetic as the evaluation (see domain/evaluate.ts),
 * asOf taken on its calendar day in `timeZone`.
 */
export function stateAt(dueAt: Date | null, asOf: Date, dueSoonDays: number, timeZone: string): ComplianceState {
  if (!dueAt) return 'NO_RECORD';
  const daysLeft = daysBetween(localDay(asOf, timeZone), dueAt);
  if (daysLeft < 0) return 'OVERDUE';
  return daysLeft <= dueSoonDays ? 'DUE_SOON' : 'OK';
}

export const worstState = (states: readonly EvaluatedState[]): EvaluatedState => worstOf(states);
