/**
 * schema/acknowledged-changes.json: breaking changes reviewers approved on purpose. An acknowledgement binds to
 * one change — coordinate, GraphQL Inspector change type, and the definition before and after — so approving
 * `Measurement.lengthMm` going from Float to Int approves nothing else on that coordinate (a later removal, or
 * Float to String, is a different change and fails until it is acknowledged too).
 *
 * The earlier format bound to `path` alone; such entries are refused with the fields they need rather than
 * read loosely, since matching them would approve any change at that path.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ChangeIdentity } from './change-readers';

export interface Acknowledgement extends ChangeIdentity {
  /** The subgraph or `supergraph` whose diff shows the change; absent: every schema that shows it. */
  schema?: string;
  reason: string;
  approvedBy: string;
}

export const ACKNOWLEDGEMENTS_FILE = 'acknowledged-changes.json';

const isText = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const isTextOrNull = (v: unknown) => v === null || typeof v === 'string';

/** Each entry checked, so a typo fails loudly instead of silently approving nothing. */
export function readAcknowledgements(dir: string): Acknowledgement[] {
  const file = path.join(dir, ACKNOWLEDGEMENTS_FILE);
  if (!existsSync(file)) return [];
  const entries = (JSON.parse(readFileSync(file, 'utf8')) as { acknowledged?: unknown[] }).acknowledged ?? [];
  return entries.map((raw, i) => {
    const entry = (raw ?? {}) as Record<string, unknown>;
    const at = `${path.basename(file)} entry ${i + 1}`;
    if ('path' in entry && !('coordinate' in entry)) {
      throw new Error(
        `${at} acknowledges path ${JSON.stringify(entry['path'])} without naming the change; write coordinate, change, before and after ` +
          '(schema:check prints them for each breaking change) so it approves that change only',
      );
    }
    const missing = ['coordinate', 'change', 'reason', 'approvedBy'].filter((k) => !isText(entry[k]));
    if (!('before' in entry) || !isTextOrNull(entry['before'])) missing.push('before (string or null)');
    if (!('after' in entry) || !isTextOrNull(entry['after'])) missing.push('after (string or null)');
    if (entry['schema'] !== undefined && !isText(entry['schema'])) missing.push('schema (a subgraph name or supergraph)');
    if (missing.length > 0) throw new Error(`${at} lacks ${missing.join(', ')}`);
    return entry as unknown as Acknowledgement;
  });
}

export function acknowledgementOf(acknowledged: Acknowledgement[], schema: string, change: ChangeIdentity): Acknowledgement | undefined {
  return acknowledged.find(
    (a) =>
      (a.schema === undefined || a.schema === schema) &&
      a.coordinate === change.coordinate &&
      a.change === change.change &&
      a.before === change.before &&
      a.after === change.after,
  );
}

/** The entry that would acknowledge `change`, printed with each unacknowledged breaking change. */
export const acknowledgementTemplate = (change: ChangeIdentity) =>
  JSON.stringify({ coordinate: change.coordinate, change: change.change, before: change.before, after: change.after, reason: '…', approvedBy: '…' });
