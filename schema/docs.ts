/**
 * `npm run docs`: a static HTML reference of the client-facing API (docs/api/index.html), built from the
 * committed supergraph: every type, field, argument and enum value with its description, the scopes a
 * field requires, deprecations, and which subgraph (and team) resolves it. One self-contained file (no
 * CDN, no script), deterministic so `npm run docs:check` can fail CI when the SDL changed and the
 * reference did not.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import {
  Kind,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  isUnionType,
  parse,
  print,
  type ConstDirectiveNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type GraphQLType,
} from 'graphql';
import { apiSchemaOf } from './check';
import { scopeVocabulary } from './scope-vocabulary';
import { readOwnSubgraphSdl, subgraphContact } from './sdl';
import { schemaDir, subgraphNames, supergraphPath } from './subgraphs';

export const docsPath = path.join(schemaDir, '..', 'docs', 'api', 'index.html');

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Descriptions are markdown-ish prose; keep paragraphs and `code`, nothing else. */
const inline = (text: string) => escape(text.replace(/\s*\n\s*/g, ' ')).replace(/`([^`]+)`/g, '<code>$1</code>');

function prose(text: string | null | undefined): string {
  if (!text) return '';
  return text
    .split(/\n\s*\n/)
    .map((p) => `<p>${inline(p)}</p>`)
    .join('');
}

/** What the supergraph says about each field beyond the API schema: scopes and resolving subgraphs. */
interface FieldFacts {
  scopes: string[][];
  graphs: string[];
}

function supergraphFacts(supergraphSdl: string): { fields: Map<string, FieldFacts>; types: Map<string, string[]> } {
  const doc = parse(supergraphSdl);
  const fields = new Map<string, FieldFacts>();
  const types = new Map<string, string[]>();
  const graphName = (d: ConstDirectiveNode) => {
    const v = d.arguments?.find((a) => a.name.value === 'graph')?.value;
    return v?.kind === Kind.ENUM ? v.value.toLowerCase() : null;
  };
  const scopesOf = (directives: readonly ConstDirectiveNode[] | undefined): string[][] => {
    const d = directives?.find((x) => x.name.value === 'requiresScopes');
    const v = d?.arguments?.find((a) => a.name.value === 'scopes')?.value;
    if (v?.kind !== Kind.LIST) return [];
    return v.values.map((alt) => (alt.kind === Kind.LIST ? alt.values.map((s) => (s.kind === Kind.STRING ? s.value : print(s))) : []));
  };
  for (const def of doc.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION && def.kind !== Kind.INTERFACE_TYPE_DEFINITION) continue;
    const typeGraphs = (def.directives ?? [])
      .filter((d) => d.name.value === 'join__type')
      .map(graphName)
      .filter((g): g is string => g != null);
    types.set(def.name.value, typeGraphs);
    const typeScopes = scopesOf(def.directives);
    for (const f of def.fields ?? []) {
      const joins = (f.directives ?? []).filter((d) => d.name.value === 'join__field');
      const graphs = joins.map(graphName).filter((g): g is string => g != null);
      const own = scopesOf(f.directives);
      fields.set(`${def.name.value}.${f.name.value}`, { scopes: own.length > 0 ? own : typeScopes, graphs: graphs.length > 0 ? graphs : typeGraphs });
    }
  }
  return { fields, types };
}

function contacts(): Map<string, string> {
  return new Map(subgraphNames.map((name) => [name, subgraphContact(name)]));
}

function typeRef(type: GraphQLType): string {
  const named = getNamedType(type);
  const text = escape(String(type));
  return isSpecifiedScalarType(named)
    ? `<code>${text}</code>`
    : `<code>${text.replace(escape(named.name), `<a href="#${named.name}">${named.name}</a>`)}</code>`;
}

function deprecation(reason: string | null | undefined): string {
  return reason ? `<p class="deprecated"><strong>Deprecated:</strong> ${inline(reason)}</p>` : '';
}

function argumentsList(args: readonly (GraphQLArgument | GraphQLInputField)[]): string {
  if (args.length === 0) return '';
  const items = args.map((a) => {
    const def = a.defaultValue !== undefined ? ` = <code>${escape(JSON.stringify(a.defaultValue))}</code>` : '';
    return `<li><code>${a.name}</code>: ${typeRef(a.type)}${def} ${prose(a.description)}${deprecation(a.deprecationReason)}</li>`;
  });
  return `<ul class="args">${items.join('')}</ul>`;
}

function scopesCell(facts: FieldFacts | undefined): string {
  if (!facts || facts.scopes.length === 0) return '<span class="muted">any credential</span>';
  return facts.scopes.map((all) => all.map((s) => `<code class="scope">${escape(s)}</code>`).join(' and ')).join(' or ');
}

function fieldRows(type: GraphQLNamedType, fields: readonly GraphQLField<unknown, unknown>[], facts: Map<string, FieldFacts>): string {
  return fields
    .map((f) => {
      const fact = facts.get(`${type.name}.${f.name}`);
      return `<tr id="${type.name}.${f.name}"${f.deprecationReason ? ' class="is-deprecated"' : ''}>
<td><code>${f.name}</code></td><td>${typeRef(f.type)}</td>
<td>${prose(f.description)}${deprecation(f.deprecationReason)}${argumentsList(f.args)}</td>
<td>${scopesCell(fact)}</td><td>${(fact?.graphs ?? []).join(', ')}</td></tr>`;
    })
    .join('\n');
}

function typeSection(type: GraphQLNamedType, facts: ReturnType<typeof supergraphFacts>, teams: Map<string, string>): string {
  const kind = isObjectType(type)
    ? 'type'
    : isInputObjectType(type)
      ? 'input'
      : isEnumType(type)
        ? 'enum'
        : isInterfaceType(type)
          ? 'interface'
          : isUnionType(type)
            ? 'union'
            : 'scalar';
  const graphs = facts.types.get(type.name) ?? [];
  const owners =
    graphs.length > 0 ? `<p class="muted">Subgraphs: ${graphs.map((g) => `${g}${teams.has(g) ? ` (${escape(teams.get(g)!)})` : ''}`).join(', ')}</p>` : '';
  let body = '';
  if (isObjectType(type) || isInterfaceType(type)) {
    body = `<table><thead><tr><th>Field</th><th>Type</th><th>Description</th><th>Requires</th><th>Resolved by</th></tr></thead><tbody>
${fieldRows(type, Object.values(type.getFields()), facts.fields)}
</tbody></table>`;
  } else if (isInputObjectType(type)) {
    body = argumentsList(Object.values(type.getFields()));
  } else if (isEnumType(type)) {
    body = `<ul class="args">${type
      .getValues()
      .map((v) => `<li><code>${v.name}</code> ${prose(v.description)}${deprecation(v.deprecationReason)}</li>`)
      .join('')}</ul>`;
  } else if (isUnionType(type)) {
    body = `<p>One of ${type
      .getTypes()
      .map((t) => `<a href="#${t.name}">${t.name}</a>`)
      .join(', ')}</p>`;
  }
  return `<section id="${type.name}"><h3><span class="kind">${kind}</span> ${type.name}</h3>${prose(type.description)}${owners}${body}</section>`;
}

export function renderReference(schema: GraphQLSchema, supergraphSdl: string): string {
  const facts = supergraphFacts(supergraphSdl);
  const teams = contacts();
  const sdl = new Map(subgraphNames.map((n) => [n, readOwnSubgraphSdl(n)] as const));
  const { scopes } = scopeVocabulary(sdl);
  const named = Object.values(schema.getTypeMap()).filter((t) => !t.name.startsWith('__') && !(isScalarType(t) && isSpecifiedScalarType(t)));
  const roots = [schema.getQueryType(), schema.getMutationType()].filter((t): t is NonNullable<typeof t> => t != null);
  const rest = named.filter((t) => !roots.includes(t as never)).sort((a, b) => a.name.localeCompare(b.name));
  const groups: [string, GraphQLNamedType[]][] = [
    ['Operations', roots],
    ['Object types', rest.filter((t) => isObjectType(t) || isInterfaceType(t) || isUnionType(t))],
    ['Input types', rest.filter(isInputObjectType)],
    ['Enums', rest.filter(isEnumType)],
    ['Scalars', rest.filter(isScalarType)],
  ];
  const nav = groups.map(([title, types]) => `<h4>${title}</h4><ul>${types.map((t) => `<li><a href="#${t.name}">${t.name}</a></li>`).join('')}</ul>`).join('');
  const deprecated = named.flatMap((t) =>
    isObjectType(t) || isInterfaceType(t) || isInputObjectType(t)
      ? Object.values(t.getFields())
          .filter((f) => f.deprecationReason)
          .map((f) => `<li><a href="#${t.name}.${f.name}">${t.name}.${f.name}</a>: ${inline(f.deprecationReason!)}</li>`)
      : isEnumType(t)
        ? t
            .getValues()
            .filter((v) => v.deprecationReason)
            .map((v) => `<li><a href="#${t.name}">${t.name}.${v.name}</a>: ${inline(v.deprecationReason!)}</li>`)
        : [],
  );
  const scopeRows = scopes
    .map((s) => `<tr><td><code class="scope">${escape(s.name)}</code></td><td>${escape(s.description)}</td><td>${s.subgraph}</td></tr>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Linepack API reference</title>
<style>
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2733;display:grid;grid-template-columns:260px 1fr;min-height:100vh}
nav{background:#f3f5f8;border-right:1px solid #dde3ea;padding:16px;position:sticky;top:0;height:100vh;overflow:auto;font-size:14px}
nav ul{list-style:none;margin:0 0 12px;padding:0}nav h4{margin:12px 0 4px;color:#56657a;text-transform:uppercase;font-size:12px;letter-spacing:.04em}
main{padding:24px 40px;max-width:1200px}h1{margin-top:0}a{color:#0b5cad;text-decoration:none}a:hover{text-decoration:underline}
section{border-top:1px solid #dde3ea;padding:12px 0}h3{margin:8px 0}.kind{font-size:12px;color:#fff;background:#56657a;border-radius:3px;padding:1px 6px;vertical-align:middle}
table{border-collapse:collapse;width:100%;font-size:14px}th,td{text-align:left;vertical-align:top;border-bottom:1px solid #eef1f5;padding:6px 8px}th{background:#f8f9fb}
td p{margin:0 0 4px}code{font:13px/1.4 ui-monospace,Menlo,Consolas,monospace;background:#f3f5f8;padding:0 3px;border-radius:3px}
.scope{background:#e6f0fb;color:#0b4a8b}.muted{color:#6b7a8c}.deprecated{color:#9a3b00}.is-deprecated code:first-child{text-decoration:line-through}
ul.args{margin:4px 0;padding-left:18px}ul.args p{display:inline;margin:0}
</style></head>
<body><nav><strong>Linepack API</strong>${nav}</nav>
<main>
<h1>Linepack API reference</h1>
<p>The GraphQL API behind the gateway's <code>/graphql</code>, generated from the committed supergraph by <code>npm run docs</code>. Every field names the scopes it requires (checked by the gateway before any subgraph is called; <code>admin:*</code> grants all) and the subgraph that resolves it.</p>
<h2 id="scopes">Scopes</h2>
<table><thead><tr><th>Scope</th><th>Grants</th><th>Declared by</th></tr></thead><tbody>${scopeRows}</tbody></table>
<h2 id="deprecations">Deprecations</h2>
${deprecated.length > 0 ? `<ul>${deprecated.join('')}</ul>` : '<p>None.</p>'}
${groups.map(([title, types]) => `<h2>${title}</h2>\n${types.map((t) => typeSection(t, facts, teams)).join('\n')}`).join('\n')}
</main></body></html>
`;
}

function main(): void {
  const check = process.argv.includes('--check');
  const supergraphSdl = readFileSync(supergraphPath, 'utf8');
  const html = renderReference(apiSchemaOf(supergraphSdl), supergraphSdl);
  if (check) {
    if (!existsSync(docsPath) || readFileSync(docsPath, 'utf8') !== html) {
      console.error(`docs:check: ${path.relative(process.cwd(), docsPath)} is out of date with the supergraph; run \`npm run docs\` and commit it.`);
      process.exit(1);
    }
    console.log('docs:check: the API reference is up to date');
    return;
  }
  mkdirSync(path.dirname(docsPath), { recursive: true });
  writeFileSync(docsPath, html);
  console.log(`wrote ${path.relative(process.cwd(), docsPath)}`);
}

if (require.main === module) main();
