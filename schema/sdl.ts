import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Kind, print, visit, type DefinitionNode, type DocumentNode } from 'graphql';
import { displayPath, parseSdl, SdlError } from './sdl-errors';
import { schemaDir, subgraphSdlPath } from './subgraphs';

/**
 * Reading the SDL a subgraph serves: its team's file (subgraphs/<name>/schema.graphql) plus the definitions of
 * schema/shared.graphql it uses. Composition, codegen, schema:check and the running subgraph all read it here.
 */

/** The subgraph's own SDL file, as its team writes it and reviewers read it. */
export function readOwnSubgraphSdl(name: string, dir: string = schemaDir): string {
  return readFileSync(subgraphSdlPath(name, dir), 'utf8');
}

/**
 * The SDL a subgraph serves: its own file plus the definitions from shared.graphql that it uses
 * (`@contact` always, since every subgraph names its owner). A type defined in both is an error:
 * shared types have one definition.
 */
export function readSubgraphSdl(name: string, dir: string = schemaDir): string {
  const sharedFile = path.join(dir, 'shared.graphql');
  return withSharedDefinitions(readOwnSubgraphSdl(name, dir), readFileSync(sharedFile, 'utf8'), { own: subgraphSdlPath(name, dir), shared: sharedFile });
}

export function withSharedDefinitions(ownSdl: string, sharedSdl: string, files: { own: string; shared: string }): string {
  const own = parseSdl(ownSdl, files.own);
  const shared = parseSdl(sharedSdl, files.shared);
  const sharedByName = new Map<string, DefinitionNode>();
  for (const def of shared.definitions) if ('name' in def && def.name) sharedByName.set(def.name.value, def);
  const defined = new Set<string>();
  for (const def of own.definitions) {
    if ('name' in def && def.name && def.kind !== Kind.OBJECT_TYPE_EXTENSION) defined.add(def.name.value);
  }
  const redefined = [...defined].filter((n) => sharedByName.has(n));
  if (redefined.length > 0) {
    throw new SdlError(`${displayPath(files.own)} defines ${redefined.join(', ')}, which ${displayPath(files.shared)} owns: use it without redefining it`);
  }
  const needed = new Set<string>(['contact']);
  const collect = (doc: DocumentNode) =>
    visit(doc, {
      NamedType: (node) => void needed.add(node.name.value),
      Directive: (node) => void needed.add(node.name.value),
    });
  collect(own);
  // Shared definitions may reference each other (none do today); one pass over the included ones covers that.
  const included = [...sharedByName.entries()].filter(([n]) => needed.has(n) && !defined.has(n)).map(([, def]) => def);
  for (const def of included) collect({ kind: Kind.DOCUMENT, definitions: [def] });
  const all = [...sharedByName.entries()].filter(([n]) => needed.has(n) && !defined.has(n)).map(([, def]) => def);
  if (all.length === 0) return ownSdl;
  return `${ownSdl.trimEnd()}\n\n# ---- from schema/shared.graphql ----\n\n${all.map((d) => print(d)).join('\n\n')}\n`;
}

/** The team a subgraph's SDL names in `@contact(name: …)`: its owner in CODEOWNERS and the API reference. */
export function subgraphContact(name: string, dir: string = schemaDir): string {
  const contact = /@contact\(\s*name:\s*"([^"]+)"/.exec(readOwnSubgraphSdl(name, dir))?.[1];
  if (!contact) throw new SdlError(`${displayPath(subgraphSdlPath(name, dir))} has no @contact(name: "…"): every subgraph names its owning team`);
  return contact;
}

/** The GitHub team CODEOWNERS gives a subgraph's package: `@linepack/<slug of its @contact name>`. */
export const codeownersTeam = (contact: string): string => `@linepack/${contact.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
