import type { CheckResult } from './check';

/**
 * One `schema:publish` entry of schema/CHANGELOG.md. A reader of the changelog wants what changed
 * shape, so description edits are counted per schema rather than quoted (the SDL and the API
 * reference carry the text).
 */
export function changelogEntry(result: Pick<CheckResult, 'changes'>, date: string): string {
  const bySchema = new Map<string, string[]>();
  const descriptionEdits = new Map<string, number>();
  for (const c of result.changes) {
    if (!bySchema.has(c.schema)) bySchema.set(c.schema, []);
    if (c.classification === 'SAFE' && c.kind.includes('DESCRIPTION')) {
      descriptionEdits.set(c.schema, (descriptionEdits.get(c.schema) ?? 0) + 1);
      continue;
    }
    bySchema.get(c.schema)!.push(`- ${c.classification}: ${c.message}${c.note ? ` (${c.note})` : ''}`);
  }
  for (const [id, n] of descriptionEdits) bySchema.get(id)!.push(`- SAFE: ${n} description${n === 1 ? '' : 's'} added or changed`);
  const body = bySchema.size === 0 ? '- no changes\n' : [...bySchema].map(([id, lines]) => `### ${id}\n\n${lines.join('\n')}\n`).join('\n');
  return `\n## ${date}\n\n${body}`;
}
