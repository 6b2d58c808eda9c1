import { z } from 'zod';

/**
 * Field types the domain events' payload schemas share (each producer's package holds its own payloads:
 * subgraphs/<name>/src/events.ts). A payload that does not parse is dead-lettered by the consumer rather than
 * half-applied; a field a producer did not send reads as null.
 */
export const isoDate = z.coerce.date();
/** A finite number, null when absent. */
export const num = z
  .number()
  .finite()
  .nullable()
  .optional()
  .transform((v) => v ?? null);
/** A string, null when absent. */
export const text = z
  .string()
  .nullable()
  .optional()
  .transform((v) => v ?? null);
/** A reported yes/no; null when it was not reported (which is not the same as "no"). */
export const flag = z
  .boolean()
  .nullable()
  .optional()
  .transform((v) => v ?? null);
