import type { z } from 'zod';
import { fieldError } from './errors';

export interface Violation {
  field: string;
  message: string;
}

/** zod issues as (field, rule) pairs, the field named the way the client sent it (e.g. input.wallThicknessMm, input[3].unit). */
export function violationsOf(error: z.ZodError, root: string): Violation[] {
  return error.issues.map((issue) => ({
    field: [root, ...issue.path].reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)), ''),
    message: issue.message,
  }));
}

export function invalidInput(violations: Violation[]): Error {
  const first = violations[0];
  const summary =
    violations.length === 1 && first
      ? `${first.field}: ${first.message}`
      : `${violations.length} invalid fields: ${violations.map((v) => `${v.field}: ${v.message}`).join('; ')}`;
  return fieldError('BAD_USER_INPUT', summary, { field: first?.field, violations });
}

/** Validates client input at the edge; the error names every offending field and its rule. */
export function validateInput<S extends z.ZodType>(schema: S, input: unknown, root = 'input'): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw invalidInput(violationsOf(result.error, root));
  return result.data;
}
