import { z } from 'zod';
import { hasUnsafeCharacters, safeText, textLimits, UNSAFE_CHARACTERS_RULE } from '@linepack/lib/validation';

/** Longest free text (notes, a reduction's reason): a paragraph or two, not a report. */
export const NOTES_LIMIT = 2000;
/** One repair or pressure reduction covers at most this many anomalies (a sleeve or a cut-out spans a few joints). */
export const MAX_ANOMALIES_PER_RECORD = 100;
/**
 * A laser scan's river-bottom profile, thinned to the deepest path: RSTRENG evaluates every pair of points (n²/2), so
 * 500 points is 125,000 sub-lengths — milliseconds — and more resolution than any ditch measurement carries.
 */
export const MAX_PROFILE_POINTS = 500;
/** A client's clock may run this far ahead of ours before "now" reads as the future. */
const CLOCK_SKEW_MS = 5 * 60_000;

export const REPAIR_TYPES = ['RECOAT', 'TYPE_A_SLEEVE', 'TYPE_B_SLEEVE', 'COMPOSITE_SLEEVE', 'CUT_OUT', 'GRIND_REPAIR', 'DEPOSITED_WELD', 'OTHER'] as const;
export const FIELD_EXAMINATION_METHODS = ['UT', 'PAUT', 'MPI', 'LASER_SCAN', 'PIT_GAUGE', 'VISUAL', 'OTHER'] as const;

/** A date that has happened: what was examined, repaired or reduced cannot be recorded ahead of time. */
export const pastDate = z.date().refine((d) => d.getTime() <= Date.now() + CLOCK_SKEW_MS, 'must not be in the future');

const id = z.string().min(1, 'must not be empty').max(textLimits.id, `at most ${textLimits.id} characters`);
const idempotencyKey = safeText(textLimits.key);
/**
 * Free text may run over several lines (newlines, carriage returns and tabs), but is otherwise held to the rule every
 * name and key obeys (lib/validation hasUnsafeCharacters): no other control characters, no line or paragraph
 * separators, no unpaired surrogates, no bidirectional overrides or isolates.
 */
const freeText = z
  .string()
  .trim()
  .max(NOTES_LIMIT, `at most ${NOTES_LIMIT} characters`)
  .refine((text) => !hasUnsafeCharacters(text.replace(/[\t\n\r]/g, ' ')), UNSAFE_CHARACTERS_RULE);
const lengthMm = z.number().finite().gt(0, 'must be more than 0 and at most 100000 mm').max(100_000, 'must be more than 0 and at most 100000 mm');

const measurementIds = z
  .array(id)
  .min(1, 'must name at least one anomaly')
  .max(MAX_ANOMALIES_PER_RECORD, `at most ${MAX_ANOMALIES_PER_RECORD} anomalies`)
  .superRefine((ids, ctx) => {
    const seen = new Set<string>();
    ids.forEach((value, index) => {
      if (seen.has(value)) ctx.addIssue({ code: 'custom', path: [index], message: 'is listed twice' });
      seen.add(value);
    });
  });

export const fieldResultInput = z
  .object({
    idempotencyKey,
    measurementId: id,
    examinedAt: pastDate,
    method: z.enum(FIELD_EXAMINATION_METHODS),
    measuredDepthPctWt: z.number().finite().min(0, 'must be from 0 to 100 % of wall').max(100, 'must be from 0 to 100 % of wall').nullish(),
    measuredLengthMm: lengthMm.nullish(),
    measuredWidthMm: lengthMm.nullish(),
    remainingWallMm: z.number().finite().min(0, 'must be at least 0 mm').nullish(),
    profile: z
      .array(
        z.object({
          axialPositionMm: z.number().finite('must be a finite number'),
          depthMm: z.number().finite().min(0, 'must be at least 0 mm'),
        }),
      )
      .min(2, 'needs at least 2 points (a river-bottom profile)')
      .max(MAX_PROFILE_POINTS, `at most ${MAX_PROFILE_POINTS} points`)
      .superRefine((points, ctx) => {
        points.forEach((p, i) => {
          if (i > 0 && !(p.axialPositionMm > points[i - 1]!.axialPositionMm))
            ctx.addIssue({ code: 'custom', path: [i, 'axialPositionMm'], message: 'must be beyond the previous point (strictly increasing)' });
        });
      })
      .nullish(),
    notes: freeText.nullish(),
  })
  .superRefine((v, ctx) => {
    if (v.measuredDepthPctWt == null && v.remainingWallMm == null)
      ctx.addIssue({ code: 'custom', path: ['measuredDepthPctWt'], message: 'this or remainingWallMm is required (the depth the anomaly is assessed on)' });
  });

export const repairInput = z.object({
  idempotencyKey,
  measurementIds,
  repairType: z.enum(REPAIR_TYPES),
  repairedAt: pastDate,
  notes: freeText.nullish(),
});

export const pressureReductionInput = z.object({
  idempotencyKey,
  measurementIds,
  reducedPressureKpa: z.number().finite().gt(0, 'must be more than 0 kPa'),
  effectiveAt: pastDate,
  reason: freeText.pipe(z.string().min(1, 'must not be empty')),
});

export const liftInput = z.object({ id, liftedAt: pastDate });

export type FieldResultInput = z.output<typeof fieldResultInput>;
export type RepairInput = z.output<typeof repairInput>;
export type PressureReductionInput = z.output<typeof pressureReductionInput>;
