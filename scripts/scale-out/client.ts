/**
 * The scale-out run's client side: GraphQL over HTTP through nginx (which answers with the replica that served it),
 * and the admin CLI for the tenant and keys, run as an operator runs it.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { childEnv } from '@linepack/lib/infra/child-process';
import { repoRoot } from '@linepack/lib/repo-root';

export interface Answer {
  status: number;
  body: { data?: Record<string, any> | null; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> } | null;
  upstream: string | null;
  error: string | null;
}

export async function post(url: string, apiKey: string, query: string, variables: Record<string, unknown> = {}, timeoutMs = 20_000): Promise<Answer> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let body: Answer['body'] = null;
    try {
      body = JSON.parse(text) as Answer['body'];
    } catch {
      body = null;
    }
    return { status: res.status, body, upstream: res.headers.get('x-linepack-upstream'), error: body ? null : `non-JSON answer: ${text.slice(0, 300)}` };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { status: 0, body: null, upstream: null, error: cause?.code ?? cause?.message ?? (err as Error).message };
  }
}

/** The GraphQL answer was a success: 2xx, data, no errors. */
export const succeeded = (a: Answer) => a.status >= 200 && a.status < 300 && !!a.body?.data && !a.body.errors?.length;

export function describeFailure(a: Answer): string {
  if (a.status === 0) return `no answer: ${a.error}`;
  // nginx's own error pages are HTML: name the status and nginx's title.
  const title = a.error && /<title>([^<]*)<\/title>/.exec(a.error)?.[1];
  if (title) return `HTTP ${a.status} from nginx (${title})`;
  if (a.error) return `HTTP ${a.status}: ${a.error}`;
  const first = a.body?.errors?.[0];
  return first ? `HTTP ${a.status} ${String(first.extensions?.['code'] ?? 'ERROR')}: ${first.message}` : `HTTP ${a.status}`;
}

/** Runs the CLI (bin/linepack.cjs) and returns its --json output. */
export function linepackCli(args: string[], env: Record<string, string>): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin/linepack.cjs'), ...args, '--json'], {
      cwd: repoRoot,
      env: { ...childEnv(), ...env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`linepack ${args.slice(0, 2).join(' ')} failed (exit ${code}): ${err.trim() || out.trim()}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>);
      } catch {
        reject(new Error(`linepack ${args.slice(0, 2).join(' ')} printed no JSON: ${out.trim()}`));
      }
    });
  });
}

/** Every asset id a paginated list (riskRegister / complianceStatus) holds. */
export async function allAssetIds(url: string, apiKey: string, query: string, field: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let after: string | null = null;
  for (let page = 0; page < 200; page++) {
    const answer = await post(url, apiKey, query, { after });
    if (!succeeded(answer)) throw new Error(`${field}: ${describeFailure(answer)}`);
    const connection = answer.body!.data![field] as {
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
      edges: Array<{ node: { asset: { id: string } } }>;
    };
    for (const edge of connection.edges) ids.add(edge.node.asset.id);
    if (!connection.pageInfo.hasNextPage) break;
    after = connection.pageInfo.endCursor;
  }
  return ids;
}
