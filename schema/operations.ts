/**
 * The operations real clients send, collected from where they are written: the README's examples, the
 * MCP companion's operations (its operations/*.graphql, with the tools that send each; any GraphQL still
 * written as a Python string literal is read with Python's own parser), the console's
 * sources and any `operations/*.graphql`, and the end-to-end tests. A candidate is kept when it parses
 * as an executable document; which ones the API actually accepts is decided against the baseline schema.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Kind, parse, visit, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import ts from 'typescript';

export interface ClientOperation {
  /** Operation name, or its first line when anonymous. */
  name: string;
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
function operationsOf(text: string, file: string, line: number): ClientOperation[] {
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
      out.push(...operationsOf(chunk, path.relative(root, file), line + offset));
      offset += chunk.split('\n').length;
    }
  }
  return out;
}

function fromTypeScript(file: string, root: string): ClientOperation[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: ClientOperation[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && looksLikeOperation(node.text)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      out.push(...operationsOf(node.text, path.relative(root, file), line));
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
  return strings.filter((s) => looksLikeOperation(s.text)).flatMap((s) => operationsOf(s.text, path.relative(root, s.file), s.line));
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
          file: path.relative(root, file),
          line,
          document: { kind: Kind.DOCUMENT, definitions: [d, ...usedFragments(d, fragments)] },
          tools: toolsLine ? toolsLine[1]!.split(',').map((t) => t.trim()) : [],
        },
      ];
    }),
  );
}

export function collectClientOperations(root: string): ClientOperation[] {
  const ops: ClientOperation[] = [];
  ops.push(...walk(root, (f) => /README\.md$/.test(f) && !f.includes(`${path.sep}node_modules${path.sep}`)).flatMap((f) => fromMarkdown(f, root)));
  ops.push(
    ...fromPython(
      walk(path.join(root, 'mcp-server', 'src'), (f) => f.endsWith('.py')),
      root,
    ),
  );
  for (const dir of ['test', 'console/src', 'subgraphs']) {
    const files = walk(path.join(root, dir), (f) => /\.(ts|tsx)$/.test(f) && (dir !== 'subgraphs' || f.includes(`${path.sep}test${path.sep}`)));
    for (const f of files) ops.push(...fromTypeScript(f, root));
  }
  const mcpDir = path.join(root, MCP_OPERATIONS_DIR) + path.sep;
  for (const f of walk(root, (f) => f.endsWith('.graphql') && f.includes(`${path.sep}operations${path.sep}`) && !f.startsWith(mcpDir))) {
    ops.push(...operationsOf(readFileSync(f, 'utf8'), path.relative(root, f), 1));
  }
  ops.push(...collectMcpToolOperations(root));
  return ops;
}
