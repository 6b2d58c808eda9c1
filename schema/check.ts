/**
 * `npm run schema:check`: what a schema change does to its consumers, before it lands.
 *
 * For each subgraph (the SDL it serves) and for the client-facing API schema of the composed supergraph,
 * the current schema is diffed against the published baseline in `schema/published/` with
 * @graphql-inspector/core and every change is classified BREAKING / DANGEROUS / SAFE. The baseline is the
 * committed `schema/published/` rather than the git merge base: CI runs in fresh clones, and reviewers see
 * a baseline change (`npm run schema:publish`) in the pull request itself.
 *
 * It fails on
 *   - a breaking change, unless the removed field or enum value was already `@deprecated` in the
 *     baseline (then it is DANGEROUS) or the change is acknowledged in `schema/acknowledged-changes.json`
 *     (path, reason, approvedBy — a file reviewers see);
 *   - any real client operation (README, MCP companion, console, tests: see operations.ts) that is valid
 *     against the baseline API and invalid against the new one, named with its file and line.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Supergraph } from '@apollo/federation-internals';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { diff, CriticalityLevel, type Change } from '@graphql-inspector/core';
import { buildSchema, isEnumType, isInputObjectType, isInterfaceType, isObjectType, parse, printSchema, validate, type GraphQLSchema } from 'graphql';
import { composeSupergraph } from './compose';
import { collectClientOperations, collectMcpToolOperations, type ClientOperation } from './operations';
import { readSubgraphSdl, schemaDir, subgraphNames } from './subgraphs';

export type Classification = 'BREAKING' | 'ACKNOWLEDGED' | 'DANGEROUS' | 'SAFE';

export interface ClassifiedChange {
  schema: string;
  classification: Classification;
  /** graphql-inspector's change type (e.g. FIELD_REMOVED, FIELD_DESCRIPTION_CHANGED). */
  kind: string;
  path: string | null;
  message: string;
  note: string | null;
  breaks: string[];
}

export interface BrokenOperation {
  operation: ClientOperation;
  errors: string[];
}

export interface CheckResult {
  changes: ClassifiedChange[];
  brokenOperations: BrokenOperation[];
  /** MCP tool operations the current API schema refuses, broken by this change or not: a tool would fail. */
  invalidToolOperations: BrokenOperation[];
  operationsChecked: number;
  ok: boolean;
}

export interface Acknowledgement {
  schema: string;
  path: string;
  reason: string;
  approvedBy: string;
}

export interface CheckOptions {
  /** Where the SDL files are (default: this package). */
  schemaDir?: string;
  /** The baseline (default: <schemaDir>/published). */
  baseDir?: string;
  /** Where client operations are collected from (default: the repository). */
  root?: string;
}

export const API_SCHEMA = 'supergraph';

export function apiSchemaOf(supergraphSdl: string): GraphQLSchema {
  return Supergraph.build(supergraphSdl, { supportedFeatures: null }).apiSchema().toGraphQLJSSchema();
}

export const subgraphSchemaOf = (sdl: string) => buildSubgraphSchema(parse(sdl));

/** The current schemas, as the baseline stores them: each subgraph's served SDL and the printed API schema. */
export function currentSchemas(dir: string): Map<string, string> {
  const composed = composeSupergraph(dir);
  if ('errors' in composed) throw new Error(`composition failed:\n  ${composed.errors.join('\n  ')}`);
  const out = new Map<string, string>(subgraphNames.map((name) => [name, readSubgraphSdl(name, dir)]));
  out.set(API_SCHEMA, printSchema(apiSchemaOf(composed.supergraphSdl)) + '\n');
  return out;
}

const build = (id: string, sdl: string) => (id === API_SCHEMA ? buildSchema(sdl) : subgraphSchemaOf(sdl));

/** A removal whose target carried @deprecated in the baseline went through the deprecation step. */
function deprecatedInBaseline(old: GraphQLSchema, change: Change): boolean {
  if (!change.path) return false;
  const [typeName, member] = change.path.split('.');
  if (!typeName || !member) return false;
  const type = old.getType(typeName);
  if (isEnumType(type)) return type.getValue(member)?.deprecationReason != null;
  if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) return type.getFields()[member]?.deprecationReason != null;
  return false;
}

function readAcknowledgements(dir: string): Acknowledgement[] {
  const file = path.join(dir, 'acknowledged-changes.json');
  if (!existsSync(file)) return [];
  return (JSON.parse(readFileSync(file, 'utf8')) as { acknowledged?: Acknowledgement[] }).acknowledged ?? [];
}

const where = (op: ClientOperation) => `${op.file}:${op.line} ${op.name}${op.tools?.length ? ` (MCP tool ${op.tools.join(', ')})` : ''}`;

export async function runSchemaCheck(options: CheckOptions = {}): Promise<CheckResult> {
  const dir = options.schemaDir ?? schemaDir;
  const baseDir = options.baseDir ?? path.join(dir, 'published');
  const root = options.root ?? path.resolve(dir, '..');
  const acknowledged = readAcknowledgements(dir);
  const current = currentSchemas(dir);

  const oldApiFile = path.join(baseDir, `${API_SCHEMA}.graphql`);
  const oldApi = existsSync(oldApiFile) ? buildSchema(readFileSync(oldApiFile, 'utf8')) : null;
  const newApi = buildSchema(current.get(API_SCHEMA)!);
  const operations = oldApi ? collectClientOperations(root).filter((op) => validate(oldApi, op.document).length === 0) : [];
  const brokenOperations = operations
    .map((operation) => ({ operation, errors: validate(newApi, operation.document).map((e) => e.message) }))
    .filter((b) => b.errors.length > 0);
  const alreadyBroken = new Set(brokenOperations.map((b) => where(b.operation)));
  const invalidToolOperations = collectMcpToolOperations(root)
    .map((operation) => ({ operation, errors: validate(newApi, operation.document).map((e) => e.message) }))
    .filter((b) => b.errors.length > 0 && !alreadyBroken.has(where(b.operation)));

  const changes: ClassifiedChange[] = [];
  for (const [id, sdl] of current) {
    const oldFile = path.join(baseDir, `${id}.graphql`);
    if (!existsSync(oldFile)) {
      changes.push({
        schema: id,
        classification: 'SAFE',
        kind: 'SCHEMA_ADDED',
        path: null,
        message: `new schema ${id} (no published baseline yet)`,
        note: null,
        breaks: [],
      });
      continue;
    }
    const old = build(id, readFileSync(oldFile, 'utf8'));
    for (const change of await diff(old, build(id, sdl))) {
      const level = change.criticality.level;
      let classification: Classification = level === CriticalityLevel.Breaking ? 'BREAKING' : level === CriticalityLevel.Dangerous ? 'DANGEROUS' : 'SAFE';
      let note: string | null = null;
      if (classification === 'BREAKING' && deprecatedInBaseline(old, change)) {
        classification = 'DANGEROUS';
        note = 'deprecated in the published schema first';
      }
      const ack = classification === 'BREAKING' ? acknowledged.find((a) => a.schema === id && a.path === change.path) : undefined;
      if (ack) {
        classification = 'ACKNOWLEDGED';
        note = `acknowledged by ${ack.approvedBy}: ${ack.reason}`;
      }
      const member = change.path?.split('.').pop();
      const breaks = member ? brokenOperations.filter((b) => b.errors.some((e) => e.includes(`"${member}"`))).map((b) => where(b.operation)) : [];
      changes.push({ schema: id, classification, kind: change.type, path: change.path ?? null, message: change.message, note, breaks });
    }
  }
  const ok = !changes.some((c) => c.classification === 'BREAKING') && brokenOperations.length === 0 && invalidToolOperations.length === 0;
  return { changes, brokenOperations, invalidToolOperations, operationsChecked: operations.length, ok };
}

export function formatReport(result: CheckResult): string {
  const lines: string[] = [];
  for (const c of result.changes) {
    lines.push(`${c.classification.padEnd(12)} ${c.schema.padEnd(12)} ${c.message}${c.note ? `  (${c.note})` : ''}`);
    for (const b of c.breaks) lines.push(`${' '.repeat(26)}breaks ${b}`);
  }
  for (const b of result.brokenOperations) lines.push(`BROKEN OP    ${where(b.operation)}: ${b.errors.join('; ')}`);
  for (const b of result.invalidToolOperations) lines.push(`INVALID OP   ${where(b.operation)}: ${b.errors.join('; ')}`);
  const count = (k: Classification) => result.changes.filter((c) => c.classification === k).length;
  lines.push(
    `schema:check: ${count('BREAKING')} breaking, ${count('ACKNOWLEDGED')} acknowledged, ${count('DANGEROUS')} dangerous, ${count('SAFE')} safe; ` +
      `${result.brokenOperations.length} of ${result.operationsChecked} client operations broken` +
      `${result.invalidToolOperations.length ? `, ${result.invalidToolOperations.length} MCP tool operations invalid` : ''} — ${result.ok ? 'OK' : 'FAILED'}`,
  );
  return lines.join('\n');
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (require.main === module) {
  runSchemaCheck({ schemaDir: arg('--schema-dir'), baseDir: arg('--base-dir'), root: arg('--root') }).then(
    (result) => {
      console.log(formatReport(result));
      if (!result.ok) {
        console.error(
          '\nA breaking change needs @deprecated first (publish that, then remove), or an entry in schema/acknowledged-changes.json that reviewers approve; a broken client operation must be updated in the same change.',
        );
        process.exit(1);
      }
    },
    (err: unknown) => {
      console.error(`schema:check failed: ${(err as Error).message}`);
      process.exit(1);
    },
  );
}
