/**
 * `npm run schema:check`: what a schema change does to its consumers, before it lands.
 *
 * For each subgraph (the SDL it serves) and for the client-facing API schema of the composed supergraph,
 * the current schema is diffed against its published baseline (`subgraphs/<name>/published.graphql`, the API's
 * `schema/published/supergraph.graphql`) with @graphql-inspector/core and every change is classified BREAKING /
 * DANGEROUS / SAFE. The baseline is the committed file rather than the git merge base: CI runs in fresh clones, and reviewers see
 * a baseline change (`npm run schema:publish`) in the pull request itself.
 *
 * Each change names the client operations it reaches, from the schema coordinates each operation reads
 * (coordinates.ts, change-readers.ts) — so a change that leaves an operation valid but changes what it
 * receives (Float to Int, non-null to nullable) still names its readers, and a deprecation names who still
 * reads the field.
 *
 * It fails on
 *   - a breaking change, unless the removed field or enum value was already `@deprecated` in the
 *     baseline (then it is DANGEROUS) or that very change — coordinate, change type, before and after — is
 *     acknowledged in `schema/acknowledged-changes.json` (acknowledgements.ts);
 *   - a client operation (README, console, CLI, MCP companion, registered trusted documents: operations.ts)
 *     that the new API schema refuses, whatever the baseline says — so a `schema:publish --force` cannot take
 *     an operation out of the check;
 *   - a test's operation that the new API schema refuses and the baseline, or the union of baseline and new
 *     schema, accepts (one they all refuse is invalid on purpose, a test of the errors).
 * Operations are named with their file and line.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Supergraph } from '@apollo/federation-internals';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { diff, CriticalityLevel, type Change } from '@graphql-inspector/core';
import { buildASTSchema, buildSchema, isEnumType, isInputObjectType, isInterfaceType, isObjectType, printSchema, validate, type GraphQLSchema } from 'graphql';
import { composeSupergraph } from './compose';
import { acknowledgementOf, acknowledgementTemplate, readAcknowledgements } from './acknowledgements';
import { identityOf, isDeprecation, readerMatcher, type ChangeIdentity } from './change-readers';
import { readsOf, unionSchema, type OperationReads } from './coordinates';
import { collectCheckedOperations, type ClientOperation } from './operations';
import { parseSdl } from './sdl-errors';
import { readSubgraphSdl } from './sdl';
import { publishedApiSchemaPath, publishedSubgraphSdlPath, schemaDir, subgraphNames } from './subgraphs';

export type Classification = 'BREAKING' | 'ACKNOWLEDGED' | 'DANGEROUS' | 'SAFE';

/** An operation a change reaches: where it is written and how the change meets it (e.g. `reads Measurement.lengthMm`). */
export interface ChangeReader {
  operation: string;
  how: string;
}

export interface ClassifiedChange extends ChangeIdentity {
  schema: string;
  classification: Classification;
  /** graphql-inspector's change type (e.g. FIELD_REMOVED, FIELD_DESCRIPTION_CHANGED); the same as `change`. */
  kind: string;
  /** graphql-inspector's path (`Type.field.arg`); `coordinate` spells it as a schema coordinate. */
  path: string | null;
  message: string;
  note: string | null;
  deprecation: boolean;
  readers: ChangeReader[];
}

export interface InvalidOperation {
  operation: ClientOperation;
  errors: string[];
}

export interface CheckResult {
  changes: ClassifiedChange[];
  /** Client operations (not tests) that the new API schema refuses. */
  invalidClientOperations: InvalidOperation[];
  /** Test operations the new API schema refuses that are not invalid on purpose (see above). */
  brokenOperations: InvalidOperation[];
  operationsChecked: number;
  /** Operations a breaking, acknowledged or dangerous change reaches. */
  operationsReached: number;
  ok: boolean;
}

export interface CheckOptions {
  /** The schema folder of the layout to check (default: this package; subgraphs/<name>/ beside it: subgraphs.ts). */
  schemaDir?: string;
  /** Where client operations are collected from (default: the repository). */
  root?: string;
}

export const API_SCHEMA = 'supergraph';

export function apiSchemaOf(supergraphSdl: string): GraphQLSchema {
  return Supergraph.build(supergraphSdl, { supportedFeatures: null }).apiSchema().toGraphQLJSSchema();
}

/** The published baseline of one schema: a subgraph's in its package, the API schema's in schema/published/. */
export const baselinePath = (id: string, dir: string): string => (id === API_SCHEMA ? publishedApiSchemaPath(dir) : publishedSubgraphSdlPath(id, dir));

export const subgraphSchemaOf = (sdl: string, file = 'subgraph SDL') => buildSubgraphSchema(parseSdl(sdl, file));

/** The current schemas, as the baseline stores them: each subgraph's served SDL and the printed API schema. */
export function currentSchemas(dir: string): Map<string, string> {
  const composed = composeSupergraph(dir);
  if ('errors' in composed) throw new Error(`composition failed:\n  ${composed.errors.join('\n  ')}`);
  const out = new Map<string, string>(subgraphNames.map((name) => [name, readSubgraphSdl(name, dir)]));
  out.set(API_SCHEMA, printSchema(apiSchemaOf(composed.supergraphSdl)) + '\n');
  return out;
}

/** `file` names the SDL in a syntax error: the baseline file, or the schema whose served SDL this is. */
const build = (id: string, sdl: string, file: string) => (id === API_SCHEMA ? buildASTSchema(parseSdl(sdl, file)) : subgraphSchemaOf(sdl, file));

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

export const where = (op: ClientOperation) => `${op.file}:${op.line} ${op.name}${op.tools?.length ? ` (MCP tool ${op.tools.join(', ')})` : ''}`;

const errorsOf = (schema: GraphQLSchema, op: ClientOperation) => validate(schema, op.document).map((e) => e.message);

export async function runSchemaCheck(options: CheckOptions = {}): Promise<CheckResult> {
  const dir = options.schemaDir ?? schemaDir;
  const root = options.root ?? path.resolve(dir, '..');
  const acknowledged = readAcknowledgements(dir);
  const current = currentSchemas(dir);

  const oldApiFile = baselinePath(API_SCHEMA, dir);
  const oldApi = existsSync(oldApiFile) ? buildASTSchema(parseSdl(readFileSync(oldApiFile, 'utf8'), oldApiFile)) : null;
  const newApi = buildSchema(current.get(API_SCHEMA)!);

  const eitherApi = unionSchema(oldApi, newApi);
  const invalidClientOperations: InvalidOperation[] = [];
  const brokenOperations: InvalidOperation[] = [];
  const checked: { operation: ClientOperation; reads: OperationReads }[] = [];
  for (const operation of collectCheckedOperations(root)) {
    const errors = errorsOf(newApi, operation);
    if (operation.source !== 'test') {
      if (errors.length > 0) invalidClientOperations.push({ operation, errors });
    } else if (errors.length > 0) {
      // A test may send an invalid operation on purpose: one that the baseline and the union of baseline and new
      // schema both refuse is that. Otherwise it reads something this change removed or changed.
      if (!oldApi || (errorsOf(oldApi, operation).length > 0 && errorsOf(eitherApi, operation).length > 0)) continue;
      brokenOperations.push({ operation, errors });
    }
    checked.push({ operation, reads: readsOf(eitherApi, operation.document) });
  }

  const changes: ClassifiedChange[] = [];
  for (const [id, sdl] of current) {
    const oldFile = baselinePath(id, dir);
    if (!existsSync(oldFile)) {
      changes.push({
        schema: id,
        classification: 'SAFE',
        kind: 'SCHEMA_ADDED',
        change: 'SCHEMA_ADDED',
        coordinate: id,
        before: null,
        after: null,
        path: null,
        message: `new schema ${id} (no published baseline yet)`,
        note: null,
        deprecation: false,
        readers: [],
      });
      continue;
    }
    const old = build(id, readFileSync(oldFile, 'utf8'), oldFile);
    const next = build(id, sdl, `${id} (served SDL)`);
    for (const change of await diff(old, next)) {
      const level = change.criticality.level;
      let classification: Classification = level === CriticalityLevel.Breaking ? 'BREAKING' : level === CriticalityLevel.Dangerous ? 'DANGEROUS' : 'SAFE';
      let note: string | null = null;
      if (classification === 'BREAKING' && deprecatedInBaseline(old, change)) {
        classification = 'DANGEROUS';
        note = 'deprecated in the published schema first';
      }
      const identity = identityOf(change, old, next);
      const ack = classification === 'BREAKING' ? acknowledgementOf(acknowledged, id, identity) : undefined;
      if (ack) {
        classification = 'ACKNOWLEDGED';
        note = `acknowledged by ${ack.approvedBy}: ${ack.reason}`;
      }
      const readerOf = readerMatcher(change);
      const readers = checked.flatMap(({ operation, reads }) => {
        const how = readerOf(reads);
        return how ? [{ operation: where(operation), how }] : [];
      });
      changes.push({
        schema: id,
        classification,
        kind: change.type,
        ...identity,
        path: change.path ?? null,
        message: change.message,
        note,
        deprecation: isDeprecation(change),
        readers,
      });
    }
  }
  const reached = new Set(changes.filter((c) => c.classification !== 'SAFE').flatMap((c) => c.readers.map((r) => r.operation)));
  const ok = !changes.some((c) => c.classification === 'BREAKING') && brokenOperations.length === 0 && invalidClientOperations.length === 0;
  return { changes, invalidClientOperations, brokenOperations, operationsChecked: checked.length, operationsReached: reached.size, ok };
}

export function formatReport(result: CheckResult): string {
  const lines: string[] = [];
  const indent = ' '.repeat(26);
  for (const c of result.changes) {
    lines.push(`${c.classification.padEnd(12)} ${c.schema.padEnd(12)} ${c.message}${c.note ? `  (${c.note})` : ''}`);
    const verb = c.deprecation ? 'still read by' : c.classification === 'SAFE' ? 'reaches' : c.classification === 'DANGEROUS' ? 'may affect' : 'affects';
    for (const r of c.readers) lines.push(`${indent}${verb} ${r.operation}  (${r.how})`);
    if (c.deprecation && c.readers.length === 0) lines.push(`${indent}no client operation reads it`);
    if (c.classification === 'BREAKING') lines.push(`${indent}to acknowledge: ${acknowledgementTemplate(c)}`);
  }
  for (const b of result.invalidClientOperations) lines.push(`INVALID OP   ${where(b.operation)}: ${b.errors.join('; ')}`);
  for (const b of result.brokenOperations) lines.push(`BROKEN OP    ${where(b.operation)}: ${b.errors.join('; ')}`);
  const count = (k: Classification) => result.changes.filter((c) => c.classification === k).length;
  lines.push(
    `schema:check: ${count('BREAKING')} breaking, ${count('ACKNOWLEDGED')} acknowledged, ${count('DANGEROUS')} dangerous, ${count('SAFE')} safe; ` +
      `${result.operationsReached} of ${result.operationsChecked} operations read a breaking or dangerous change; ` +
      `${result.invalidClientOperations.length} client operations invalid, ${result.brokenOperations.length} test operations broken — ${result.ok ? 'OK' : 'FAILED'}`,
  );
  return lines.join('\n');
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (require.main === module) {
  runSchemaCheck({ schemaDir: arg('--schema-dir'), root: arg('--root') }).then(
    (result) => {
      console.log(formatReport(result));
      if (!result.ok) {
        console.error(
          '\nA breaking change needs @deprecated first (publish that, then remove), or the entry printed under it ("to acknowledge") in schema/acknowledged-changes.json, with a reason and approvedBy, that reviewers approve; an invalid or broken operation must be updated in the same change.',
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
