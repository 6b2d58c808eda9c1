import { z } from 'zod';
import { fieldError } from './errors';

/**
 * Longest accepted strings by kind (the SDL descriptions state them). The gateway caps every string of a request
 * at 10,000 characters; these are the tighter limits of what is stored, matched or looked up.
 */
export const textLimits = {
  /** Display names. */
  name: 200,
  /** Ids of stored documents (UUIDs, 36 characters). */
  id: 100,
  /** Client-supplied keys (idempotency keys). */
  key: 200,
  /** Search text such as assets(filter: {nameContains}). */
  search: 100,
  /** Opaque pagination cursors. */
  cursor: 500,
} as const;

/**
 * Characters that have no place in a name or key: C0 and C1 controls and line/paragraph separators (newlines and
 * tabs included), unpaired
 * UTF-16 surrogates (not text; they break JSON consumers) and bidirectional overrides and isolates, which make a
 * name display differently from what it is ("Trojan Source").
 */
const UNSAFE_CHARACTERS =
  /[\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UNSAFE_CHARACTERS_RULE = 'must not contain control characters, unpaired surrogates or bidirectional overrides';

export function hasUnsafeCharacters(text: string): boolean {
  return UNSAFE_CHARACTERS.test(text);
}

/** A trimmed, non-empty, single-line string of at most `max` characters, without unsafe characters. */
export function safeText(max: number) {
  return z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(max, `at most ${max} characters`)
    .refine((text) => !hasUnsafeCharacters(text), UNSAFE_CHARACTERS_RULE);
}

/** An id argument: refused when longer than any id Linepack issues, so nothing looks up or echoes a megabyte. */
export function checkIdArgument(id: string, field: string): string {
  if (id.length > textLimits.id) throw fieldError('BAD_USER_INPUT', `${field}: at most ${textLimits.id} characters`, { field });
  return id;
}

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

/** An error lists this many violations at most (a 10,000-item batch can break a rule 10,000 times). */
export const MAX_LISTED_VIOLATIONS = 100;

export function invalidInput(violations: Violation[]): Error {
  const first = violations[0];
  const listed = violations.slice(0, MAX_LISTED_VIOLATIONS);
  const summary =
    violations.length === 1 && first
      ? `${first.field}: ${first.message}`
      : `${violations.length} invalid fields: ${listed.map((v) => `${v.field}: ${v.message}`).join('; ')}`;
  return fieldError('BAD_USER_INPUT', summary, { field: first?.field, violations: listed, violationCount: violations.length });
}

/** Validates client input at the edge; the error names every offending field and its rule. */
export function validateInput<S extends z.ZodType>(schema: S, input: unknown, root = 'input'): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw invalidInput(violationsOf(result.error, root));
  return result.data;
}
