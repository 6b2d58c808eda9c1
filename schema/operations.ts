/**
 * The operations real clients send, collected from where they are written: the README's examples, the
 * MCP companion's operations (its operations/*.graphql, with the tools that send each; any GraphQL still
 * written as a Python string literal is read with Python's own parser), the console's sources, the CLI and
 * the scripts it shares code with, any `operations/*.graphql`, and the end-to-end tests — plus, for schema:check,
 * the registered trusted documents (lib/generated/trusted-documents.ts) that none of those holds. A candidate
 * is kept when it parses as an executable document. A template literal counts when every `${…}` in it names a
 * string constant of the same file (the console and CLI share field lists that way).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Kind, parse, print, visit, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import ts from 'typescript';

/**
 * Where an operation comes from. Tests may send invalid operations on purpose (to test the errors), so only a
 * test's operation that the baseline accepts is held to the new schema; every other source is a client that
 * must stay valid, whatever the baseline says.
 */
export type OperationSource = 'readme' | 'mcp' | 'console' | 'cli' | 'operations' | 'trusted-documents' | 'test';

export interface ClientOperation {
  /** Operation name, or its first line when anonymous. */
  name: string;
  source: OperationSource;
  file: string;
  line: number;
  document: DocumentNode;
  /** For the MCP companion's operations: the tools that send it (its `# tools:` line). */
  tools?: string[];
}

/** Where the MCP companion keeps the operations its tools send (see its operations/README.md). */
export const MCP_OPERATIONS_DIR = path.join('mcp-server', 'src', 'linepack_mcp', 'operations');

function walk(dir: string, accept: (file: string) => boolean, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist' || entry === '.venv' || entry.startsWith('.')) continue;
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) walk(full, accept, out);
    else if (accept(full)) out.push(full);
  }
  return out;
}

/** One operation per document: each operation keeps the fragments the document defines. */
function operationsOf(text: string, file: string, line: number, source: OperationSource): ClientOperation[] {
  let document: DocumentNode;
  try {
    document = parse(text);
  } catch {
    return [];
  }
  const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  const ops = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (ops.length === 0 || document.definitions.some((d) => d.kind !== Kind.OPERATION_DEFINITION && d.kind !== Kind.FRAGMENT_DEFINITION)) return [];
  return ops.map((op) => ({
    name: op.name?.value ?? (text.trim().split('\n')[0] ?? '').slice(0, 60),
    source,
    file,
    line: line + (op.loc ? text.slice(0, op.loc.start).split('\n').length - 1 : 0),
    document: { kind: Kind.DOCUMENT, definitions: [op, ...fragments] },
  }));
}

const looksLikeOperation = (s: string) => /^\s*(query|mutation|subscription|fragment|\{)/.test(s) && s.includes('{');

function fromMarkdown(file: string, root: string): ClientOperation[] {
  const text = readFileSync(file, 'utf8');
  const out: ClientOperation[] = [];
  const fence = /```graphql\n([\s\S]*?)```/g;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    const line = text.slice(0, m.index).split('\n').length + 1;
    // A README block holds several examples; anonymous ones cannot share a document, so parse each
    // top-level operation on its own.
    const chunks = m[1]!.split(/\n(?=(?:query|mutation|subscription|\{)\b|\n\{)/);
    let offset = 0;
    for (const chunk of chunks) {
      out.push(...operationsOf(chunk, path.relative(root, file), line + offset, 'readme'));
      offset += chunk.split('\n').length;
    }
  }
  return out;
}

/** The string constants a file declares (`const X = '…'` or a template of such constants), by name. */
function stringConstants(source: ts.SourceFile): Map<string, ts.Expression> {
  const out = new Map<string, ts.Expression>();
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclarationList(node) && node.flags & ts.NodeFlags.Const) {
      for (const d of node.declarations) if (ts.isIdentifier(d.name) && d.initializer) out.set(d.name.text, d.initializer);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The text of a string literal or a template whose every substitution is a string constant; null otherwise. */
function constantText(node: ts.Node, constants: Map<string, ts.Expression>, seen = new Set<string>()): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isParenthesizedExpression(node)) return constantText(node.expression, constants, seen);
  if (ts.isTemplateExpression(node)) {
    let text = node.head.text;
    for (const span of node.templateSpans) {
      if (!ts.isIdentifier(span.expression) || seen.has(span.expression.text)) return null;
      const value = constants.get(span.expression.text);
      const part = value ? constantText(value, constants, new Set([...seen, span.expression.text])) : null;
      if (part === null) return null;
      text += part + span.literal.text;
    }
    return text;
  }
  return null;
}

/** `TEMPLATE.replace('placeholder', …)`: the console fills a placeholder of a constant operation at run time. */
function placeholderFill(node: ts.Node): { template: string; placeholder: ts.Expression; value: ts.Expression } | null {
  if (!ts.isCallExpression(node) || node.arguments.length !== 2 || !ts.isPropertyAccessExpression(node.expression)) return null;
  const { expression: target, name } = node.expression;
  if (name.text !== 'replace' || !ts.isIdentifier(target)) return null;
  return { template: target.text, placeholder: node.arguments[0]!, value: node.arguments[1]! };
}

/**
 * Reading the sources (a TypeScript parse per file, a Python process for the MCP companion) is most of a check's time,
 * and a process that checks more than once (the schema tests, `schema:publish` after its check) reads the same files
 * again: what was read from files that have not changed since (the same modification time to the nanosecond and the
 * same size) is answered from memory. Callers never modify the operations they get.
 */
const readFromFiles = new Map<string, { stamp: string; ops: ClientOperation[] }>();
function unlessChanged(key: string, files: string[], read: () => ClientOperation[]): ClientOperation[] {
  const stamp = files
    .map((f) => {
      const stat = statSync(f, { bigint: true });
      return `${f}:${stat.mtimeNs}:${stat.size}`;
    })
    .join('\n');
  const known = readFromFiles.get(key);
  if (known?.stamp === stamp) return known.ops;
  const ops = read();
  readFromFiles.set(key, { stamp, ops });
  return ops;
}

export function fromTypeScript(file: string, root: string, origin: OperationSource = 'test'): ClientOperation[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const constants = stringConstants(source);
  const out: ClientOperation[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  // A constant whose placeholder is filled where it is sent is an operation only once filled: taken at each fill.
  const templates = new Set<ts.Expression>();
  const findTemplates = (node: ts.Node) => {
    const fill = placeholderFill(node);
    const template = fill && constants.get(fill.template);
    if (template) templates.add(template);
    ts.forEachChild(node, findTemplates);
  };
  findTemplates(source);
  const visit = (node: ts.Node) => {
    if (templates.has(node as ts.Expression)) return;
    const fill = placeholderFill(node);
    const template = fill && constants.get(fill.template);
    if (fill && template) {
      const [text, placeholder, value] = [template, fill.placeholder, fill.value].map((n) => constantText(n, constants));
      if (text != null && placeholder != null && value != null && looksLikeOperation(text)) {
        out.push(...operationsOf(text.replace(placeholder, value), path.relative(root, file), lineOf(node), origin));
      }
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
      const text = constantText(node, constants);
      if (text !== null && looksLikeOperation(text)) out.push(...operationsOf(text, path.relative(root, file), lineOf(node), origin));
      // A template's own parts are not operations on their own.
      if (ts.isTemplateExpression(node)) return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const PYTHON_STRINGS = `
import ast, json, sys
out = []
for path in sys.argv[1:]:
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append({"file": path, "line": node.lineno, "text": node.value})
print(json.dumps(out))
`;

function fromPython(files: string[], root: string): ClientOperation[] {
  if (files.length === 0) return [];
  let strings: { file: string; line: number; text: string }[];
  try {
    strings = JSON.parse(execFileSync('python3', ['-c', PYTHON_STRINGS, ...files], { encoding: 'utf8', maxBuffer: 64 << 20 })) as typeof strings;
  } catch (err) {
    throw new Error(`cannot read the MCP companion's queries with python3: ${(err as Error).message}`);
  }
  return strings.filter((s) => looksLikeOperation(s.text)).flatMap((s) => operationsOf(s.text, path.relative(root, s.file), s.line, 'mcp'));
}

/** The fragments `node` spreads, transitively, so a document carries exactly those (GraphQL refuses unused ones). */
function usedFragments(
  node: OperationDefinitionNode | FragmentDefinitionNode,
  all: Map<string, FragmentDefinitionNode>,
  seen = new Map<string, FragmentDefinitionNode>(),
) {
  visit(node, {
    FragmentSpread(spread) {
      const fragment = all.get(spread.name.value);
      if (fragment && !seen.has(fragment.name.value)) {
        seen.set(fragment.name.value, fragment);
        usedFragments(fragment, all, seen);
      }
    },
  });
  return [...seen.values()];
}

/**
 * The MCP companion's operations: one per named operation in its operations folder, with the fragments of
 * any file there that it uses, and the tools named on the `# tools:` line right above it.
 */
export function collectMcpToolOperations(root: string): ClientOperation[] {
  const dir = path.join(root, MCP_OPERATIONS_DIR);
  const files = walk(dir, (f) => f.endsWith('.graphql'));
  const parsed = files.map((file) => ({ file, text: readFileSync(file, 'utf8') })).map((f) => ({ ...f, document: parse(f.text) }));
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const f of parsed) for (const d of f.document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  return parsed.flatMap(({ file, text, document }) =>
    document.definitions.flatMap((d) => {
      if (d.kind !== Kind.OPERATION_DEFINITION) return [];
      const line = d.loc ? d.loc.startToken.line : 1;
      const toolsLine = /^#\s*tools:\s*(.+)$/.exec(text.split('\n')[line - 2]?.trim() ?? '');
      return [
        {
          name: d.name?.value ?? '(anonymous)',
          source: 'mcp' as const,
          file: path.relative(root, file),
          line,
          document: { kind: Kind.DOCUMENT, definitions: [d, ...usedFragments(d, fragments)] },
          tools: toolsLine ? toolsLine[1]!.split(',').map((t) => t.trim()) : [],
        },
      ];
    }),
  );
}

/** Where the trusted-documents manifest is generated (scripts/trusted-documents.ts); read when it exists. */
export const TRUSTED_DOCUMENTS_MANIFEST = path.join('lib', 'generated', 'trusted-documents.ts');

/** The text a document's operation is registered under: it and the fragments it uses, sorted, printed by graphql-js. */
export function canonicalText(document: DocumentNode): string {
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const used = operation ? usedFragments(operation, fragments).sort((a, b) => a.name.value.localeCompare(b.name.value)) : [];
  return print({ kind: Kind.DOCUMENT, definitions: [...(operation ? [operation] : []), ...used] });
}

/**
 * The registered trusted documents (hash -> { name, document, sources }), each named by the manifest's line for
 * its hash. The manifest is a TypeScript module whose value is the JSON the generator wrote; it is read as text,
 * so a manifest that no longer has that shape fails here rather than silently registering nothing.
 */
export function collectRegisteredTrustedDocuments(root: string): ClientOperation[] {
  const file = path.join(root, TRUSTED_DOCUMENTS_MANIFEST);
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const m = /trustedDocuments\s*(?::[^=]+)?=\s*(\{[\s\S]*\})\s*;?\s*$/.exec(text);
  let manifest: Record<string, { name?: string | null; document?: string }>;
  try {
    manifest = JSON.parse(m?.[1] ?? '') as typeof manifest;
  } catch {
    throw new Error(`${TRUSTED_DOCUMENTS_MANIFEST}: expected \`export const trustedDocuments … = { "<sha256>": { name, document, sources } }\``);
  }
  return Object.entries(manifest).flatMap(([hash, entry]) => {
    const line = text.slice(0, text.indexOf(`"${hash}"`)).split('\n').length;
    return operationsOf(entry.document ?? '', TRUSTED_DOCUMENTS_MANIFEST, line, 'trusted-documents').map((op) => ({
      ...op,
      name: entry.name ?? `${hash.slice(0, 12)} (anonymous)`,
    }));
  });
}

const originOf = (dir: string): OperationSource => (dir === 'console/src' ? 'console' : dir === 'test' || dir === 'subgraphs' ? 'test' : 'cli');

export function collectClientOperations(root: string): ClientOperation[] {
  const ops: ClientOperation[] = [];
  ops.push(...walk(root, (f) => /README\.md$/.test(f) && !f.includes(`${path.sep}node_modules${path.sep}`)).flatMap((f) => fromMarkdown(f, root)));
  const pythonFiles = walk(path.join(root, 'mcp-server', 'src'), (f) => f.endsWith('.py'));
  ops.push(...unlessChanged(`python ${root}`, pythonFiles, () => fromPython(pythonFiles, root)));
  // The CLI (cli/) and what it runs from lib/ and scripts/ are clients too; lib's own tests are tests.
  for (const dir of ['test', 'console/src', 'subgraphs', 'cli', 'lib', 'scripts']) {
    const files = walk(path.join(root, dir), (f) => /\.(ts|tsx)$/.test(f) && (dir !== 'subgraphs' || f.includes(`${path.sep}test${path.sep}`)));
    for (const f of files) {
      const inTest = f.split(path.sep).some((part) => part === 'test' || part === 'testing') || /\.test\.tsx?$/.test(f);
      if (f.endsWith(TRUSTED_DOCUMENTS_MANIFEST)) continue;
      const origin = inTest ? 'test' : originOf(dir);
      ops.push(...unlessChanged(`ts ${root} ${origin} ${f}`, [f], () => fromTypeScript(f, root, origin)));
    }
  }
  const mcpDir = path.join(root, MCP_OPERATIONS_DIR) + path.sep;
  for (const f of walk(root, (f) => f.endsWith('.graphql') && f.includes(`${path.sep}operations${path.sep}`) && !f.startsWith(mcpDir))) {
    ops.push(...operationsOf(readFileSync(f, 'utf8'), path.relative(root, f), 1, 'operations'));
  }
  ops.push(...collectMcpToolOperations(root));
  return ops;
}

/**
 * What schema:check holds to the schema: the operations written in the sources, and the registered trusted
 * documents none of them holds any longer (a client in the field may still send one). Kept apart from
 * collectClientOperations, which the manifest is generated from, so the manifest never feeds itself.
 */
export function collectCheckedOperations(root: string): ClientOperation[] {
  const ops = collectClientOperations(root);
  const written = new Set(ops.filter((op) => op.source !== 'test').map((op) => canonicalText(op.document)));
  return [...ops, ...collectRegisteredTrustedDocuments(root).filter((op) => !written.has(canonicalText(op.document)))];
}
