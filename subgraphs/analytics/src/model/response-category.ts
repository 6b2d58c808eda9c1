/**
 * Response categories for metal-loss anomalies under the integrity-management repair criteria:
 *   gas in an HCA (covered segment) §192.933(d), gas outside an HCA §192.714(d) — both as revised by
 *   the 2022 gas transmission rule (87 FR 52224) — and liquid §195.452(h)(4).
 * Only the metal-loss criteria are decided here (what Modified B31G informs); dents, cracks and other
 * feature types need data or methods Linepack does not hold and are reported as not assessable.
 * The category is decided on the depth with the ILI tool tolerance added and on the failure pressure
 * computed from that depth, so tool uncertainty never makes a feature look better than it may be.
 */
import { addYearsUtc, addDaysUtc } from './dates';
import { deeperThanB31GLimit } from './b31g';

export type ResponseCategory = 'IMMEDIATE' | 'ONE_YEAR' | 'TWO_YEAR' | 'ONE_HUNDRED_EIGHTY_DAY' | 'MONITORED' | 'OTHER';

export interface CategoryCriterion {
  category: ResponseCategory;
  ruleRef: string;
  criterion: string;
}

/** §192.933(d)(2)(iv): one-year metal-loss condition in an HCA when FPR ≤ these, by class location. */
export const HCA_ONE_YEAR_FPR: Readonly<Record<1 | 2 | 3 | 4, number>> = { 1: 1.25, 2: 1.39, 3: 1.67, 4: 2.0 };
/** §192.714(d)(2): two-year metal-loss condition outside an HCA when FPR ≤ these, by class location. */
export const NON_HCA_TWO_YEAR_FPR: Readonly<Record<1 | 2 | 3 | 4, number>> = { 1: 1.39, 2: 1.67, 3: 2.0, 4: 2.5 };
/** §192.933(d)(1)(ii) / §192.714(d)(1)(ii): immediate when the predicted failure pressure is ≤ 1.1 × MAOP. */
export const GAS_IMMEDIATE_FPR = 1.1;

/** The criteria as data, for the SDL descriptions and the README. */
export const categoryCriteria: readonly CategoryCriterion[] = [
  {
    category: 'IMMEDIATE',
    ruleRef: '§192.933(d)(1)(i) / §192.714(d)(1)(i) / §195.452(h)(4)(i)(A)',
    criterion: 'metal loss deeper than 80 % of nominal wall, regardless of dimensions',
  },
  { category: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(ii) / §192.714(d)(1)(ii)', criterion: 'gas: predicted failure pressure ≤ 1.1 × MAOP at the anomaly' },
  {
    category: 'IMMEDIATE',
    ruleRef: '§195.452(h)(4)(i)(B)',
    criterion: 'liquid: predicted burst pressure below the established maximum operating pressure at the anomaly',
  },
  {
    category: 'ONE_YEAR',
    ruleRef: '§192.933(d)(2)',
    criterion: 'gas in an HCA: failure pressure ratio ≤ 1.25 (class 1), 1.39 (class 2), 1.67 (class 3), 2.00 (class 4)',
  },
  {
    category: 'TWO_YEAR',
    ruleRef: '§192.714(d)(2)',
    criterion: 'gas outside an HCA: failure pressure ratio ≤ 1.39 (class 1), 1.67 (class 2), 2.00 (class 3), 2.50 (class 4)',
  },
  {
    category: 'ONE_HUNDRED_EIGHTY_DAY',
    ruleRef: '§195.452(h)(4)(iii)',
    criterion: 'liquid: the remaining strength gives a safe operating pressure below the established maximum operating pressure',
  },
  {
    category: 'MONITORED',
    ruleRef: '§192.933(d)(3) / §192.714(d)(3)',
    criterion: 'gas: any other metal loss — recorded and re-evaluated at the next assessment',
  },
  { category: 'OTHER', ruleRef: '§195.452(h)(4)(iv)', criterion: 'liquid: any other metal loss — evaluated and scheduled by the operator' },
];

export interface CategoryInput {
  regulation: 'CFR_192' | 'CFR_195';
  /** Gas: in a high consequence area (a covered segment). Ignored for liquid. */
  inHca: boolean;
  classLocation: number | null;
  /** With tool tolerance. */
  depthPctWt: number;
  /** From the depth with tolerance; null when B31G does not apply (depth > 80 %). */
  failurePressureKpa: number | null;
  safePressureKpa: number | null;
  /** MAOP (gas) or MOP (liquid). */
  maopKpa: number | null;
}

export interface CategoryDecision {
  category: ResponseCategory;
  ruleRef: string;
  reason: string;
}

const fmt = (n: number) => n.toFixed(2);

export function responseCategory(input: CategoryInput): CategoryDecision {
  const { regulation, depthPctWt, failurePressureKpa: pf, safePressureKpa, maopKpa: maop } = input;
  if (deeperThanB31GLimit(depthPctWt / 100)) {
    return {
      category: 'IMMEDIATE',
      ruleRef: regulation === 'CFR_195' ? '§195.452(h)(4)(i)(A)' : input.inHca ? '§192.933(d)(1)(i)' : '§192.714(d)(1)(i)',
      reason: `metal loss ${depthPctWt.toFixed(1)} % of wall is deeper than 80 %`,
    };
  }
  if (pf == null || maop == null) throw new Error('a failure pressure and MAOP are required below 80 % depth');
  const fpr = pf / maop;
  if (regulation === 'CFR_195') {
    if (pf < maop)
      return {
        category: 'IMMEDIATE',
        ruleRef: '§195.452(h)(4)(i)(B)',
        reason: `predicted burst pressure ${pf.toFixed(0)} kPa is below MOP ${maop.toFixed(0)} kPa`,
      };
    if (safePressureKpa != null && safePressureKpa < maop) {
      return {
        category: 'ONE_HUNDRED_EIGHTY_DAY',
        ruleRef: '§195.452(h)(4)(iii)',
        reason: `safe operating pressure ${safePressureKpa.toFixed(0)} kPa is below MOP ${maop.toFixed(0)} kPa`,
      };
    }
    return {
      category: 'OTHER',
      ruleRef: '§195.452(h)(4)(iv)',
      reason: `safe operating pressure ${safePressureKpa?.toFixed(0)} kPa covers MOP ${maop.toFixed(0)} kPa`,
    };
  }
  const immediateRef = input.inHca ? '§192.933(d)(1)(ii)' : '§192.714(d)(1)(ii)';
  if (fpr <= GAS_IMMEDIATE_FPR) return { category: 'IMMEDIATE', ruleRef: immediateRef, reason: `failure pressure ratio ${fmt(fpr)} ≤ 1.1` };
  const cls = (input.classLocation ?? 4) as 1 | 2 | 3 | 4;
  if (input.inHca) {
    const limit = HCA_ONE_YEAR_FPR[cls];
    if (fpr <= limit) return { category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)', reason: `failure pressure ratio ${fmt(fpr)} ≤ ${fmt(limit)} (class ${cls})` };
    return { category: 'MONITORED', ruleRef: '§192.933(d)(3)', reason: `failure pressure ratio ${fmt(fpr)} > ${fmt(limit)} (class ${cls})` };
  }
  const limit = NON_HCA_TWO_YEAR_FPR[cls];
  if (fpr <= limit) return { category: 'TWO_YEAR', ruleRef: '§192.714(d)(2)', reason: `failure pressure ratio ${fmt(fpr)} ≤ ${fmt(limit)} (class ${cls})` };
  return { category: 'MONITORED', ruleRef: '§192.714(d)(3)', reason: `failure pressure ratio ${fmt(fpr)} > ${fmt(limit)} (class ${cls})` };
}

/**
 * When the response is due, from the discovery date. Linepack takes the anomaly's observation (the
 * ILI run) as its discovery — the earliest the rules allow, so never later than the operator's own
 * date (§192.933(c) gives up to 180 days after the assessment to reach discovery).
 */
export function repairDueAt(category: ResponseCategory, discoveredAt: Date): Date | null {
  switch (category) {
    case 'IMMEDIATE':
      return discoveredAt;
    case 'ONE_YEAR':
      return addYearsUtc(discoveredAt, 1);
    case 'TWO_YEAR':
      return addYearsUtc(discoveredAt, 2);
    case 'ONE_HUNDRED_EIGHTY_DAY':
      return addDaysUtc(discoveredAt, 180);
    case 'MONITORED':
    case 'OTHER':
      return null;
  }
}
