import { humanize } from '../format';

const tones: Record<string, string> = {
  VERY_HIGH: 'danger',
  HIGH: 'danger',
  MEDIUM: 'warning',
  LOW: 'ok',
  OVERDUE: 'danger',
  DUE_SOON: 'warning',
  NO_RECORD: 'neutral',
  OK: 'ok',
  IMMEDIATE: 'danger',
  ONE_YEAR: 'warning',
  ONE_HUNDRED_EIGHTY_DAY: 'warning',
  TWO_YEAR: 'warning',
  MONITORED: 'neutral',
  OTHER: 'neutral',
  ACTIVE: 'ok',
  IDLE: 'neutral',
  PLANNED: 'neutral',
  ABANDONED: 'neutral',
  Active: 'ok',
  Revoked: 'danger',
  Expired: 'neutral',
  REPAIRED: 'ok',
  SUPERSEDED: 'neutral',
};

/** A value shown as words with a coloured background; the words carry the meaning, the colour only helps. */
export function Badge({ value, label }: { value: string | null | undefined; label?: string }) {
  if (!value) return <span>—</span>;
  return <span className={`badge badge-${tones[value] ?? 'neutral'}`}>{label ?? humanize(value)}</span>;
}
