/**
 * The recurring obligations Linepack tracks. `maxIntervalDays` is the conservative
 * day count of the longest allowed gap; `interval` states the rule as the regulation words it.
 */
export type Obligation =
  'GAS_HCA_REASSESSMENT' | 'LIQUID_HCA_REASSESSMENT' | 'CP_SURVEY' | 'RECTIFIER_CHECK' | 'VALVE_INSPECTION' | 'PATROL' | 'ATMOSPHERIC_CORROSION';

export interface ObligationRule {
  obligation: Obligation;
  regulation: 'CFR_192' | 'CFR_195';
  regulationRef: string;
  title: string;
  interval: string;
  maxIntervalDays: number;
  appliesTo: string;
}

export const obligationCatalogue: readonly ObligationRule[] = [
  {
    obligation: 'GAS_HCA_REASSESSMENT',
    regulation: 'CFR_192',
    regulationRef: '§192.939',
    title: 'Reassessment of covered segments (integrity management)',
    interval: 'not exceeding 7 calendar years',
    maxIntervalDays: 7 * 365,
    appliesTo: 'gas transmission pipelines and segments in a high consequence area',
  },
  {
    obligation: 'LIQUID_HCA_REASSESSMENT',
    regulation: 'CFR_195',
    regulationRef: '§195.452(j)',
    title: 'Reassessment of pipeline segments that could affect a high consequence area',
    interval: 'not exceeding 5 years',
    maxIntervalDays: 5 * 365,
    appliesTo: 'hazardous liquid pipelines and segments in a high consequence area',
  },
  {
    obligation: 'CP_SURVEY',
    regulation: 'CFR_192',
    regulationRef: '§192.465(a)',
    title: 'Cathodic protection monitoring (pipe-to-soil survey)',
    interval: 'once each calendar year, at intervals not exceeding 15 months',
    maxIntervalDays: 456,
    appliesTo: 'cathodically protected pipelines and segments',
  },
  {
    obligation: 'RECTIFIER_CHECK',
    regulation: 'CFR_192',
    regulationRef: '§192.465(b)',
    title: 'Rectifier inspection',
    interval: 'six times each calendar year, at intervals not exceeding 2½ months',
    maxIntervalDays: 76,
    appliesTo: 'rectifiers',
  },
  {
    obligation: 'VALVE_INSPECTION',
    regulation: 'CFR_192',
    regulationRef: '§192.745',
    title: 'Inspection and partial operation of transmission valves',
    interval: 'once each calendar year, at intervals not exceeding 15 months',
    maxIntervalDays: 456,
    appliesTo: 'valves that might be required during an emergency',
  },
  {
    obligation: 'PATROL',
    regulation: 'CFR_192',
    regulationRef: '§192.705',
    title: 'Transmission line patrol',
    interval:
      'class 1 and 2: once each calendar year, ≤ 15 months; class 3: twice each calendar year, ≤ 7½ months; class 4: four times each calendar year, ≤ 4½ months (more often at highway and railroad crossings)',
    maxIntervalDays: 456,
    appliesTo: 'gas transmission pipelines and segments; the interval tightens with class location',
  },
  {
    obligation: 'ATMOSPHERIC_CORROSION',
    regulation: 'CFR_192',
    regulationRef: '§192.481',
    title: 'Atmospheric corrosion inspection of onshore pipe exposed to the atmosphere',
    interval: 'at least once every 3 calendar years, at intervals not exceeding 39 months',
    maxIntervalDays: 1186,
    appliesTo: 'onshore pipe and components exposed to the atmosphere',
  },
];
