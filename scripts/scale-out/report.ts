/** What `npm run scale-out` found, and the table it prints for an operator. */

/** One SIGKILL: when it was sent and when the process was seen gone (ms since the traffic started). */
export interface KillRecord {
  replica: string;
  signalAtMs: number;
  deadAtMs: number;
  restartedAtMs: number | null;
  /** When the restarted replica answered /readyz. */
  readyAgainAtMs: number | null;
}

export interface ScaleOutResult {
  pass: boolean;
  reasons: string[];
  /** runId is in every process title (`linepack-scale-out[<runId>] gateway-1`), so `pgrep -af 'linepack-scale-out\[<runId>\]'` finds them. */
  setup: {
    runId: string;
    tempDir: string;
    mongo: string;
    redis: string;
    nginx: string;
    dbPrefix: string;
    /** The subgraphs of the registry run once each (every one but assets). */
    singles: string[];
    startupMs: number;
  };
  traffic: {
    durationMs: number;
    clients: number;
    sent: number;
    reads: number;
    writes: number;
    ok: number;
    failed: number;
    failedInFlight: number;
    failedBeyondInFlight: number;
    /** The first few failures beyond the in-flight ones, for the report. */
    unexplained: Array<{ op: string; startedAtMs: number; endedAtMs: number; status: number; error: string }>;
    /** Requests nginx sent to a second gateway replica after the first could not be reached. */
    retriedByNginx: number;
    /** Subgraph requests nginx sent to the second assets replica (from its access log). */
    assetsRetriedByNginx: number;
    /** The failures grouped by what the client saw (`502 Bad Gateway`, a GraphQL error code and message). */
    failuresByCause: Record<string, number>;
    /** Answers per gateway replica, as nginx reports the upstream. */
    servedBy: Record<string, number>;
    /** Answers per killed replica after it was ready again (it rejoined the rotation). */
    servedAfterRestart: Record<string, number>;
    kills: KillRecord[];
    p50Ms: number;
    p99Ms: number;
  };
  rateLimit: { tier: string; limit: number; sent: number; accepted: number; refused: number; other: number; acceptedBy: Record<string, number> };
  events: { acknowledgedWrites: number; inRiskRegister: number; inComplianceStatus: number; missing: string[]; caughtUpAfterMs: number | null };
  /** Processes this run started that were still alive after clean-up (must be empty). */
  leftoverProcesses: number[];
  totalMs: number;
}

const n = (x: number) => x.toLocaleString('en-US');
const s = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(1)} s`);

export function summaryTable(r: ScaleOutResult): string {
  const t = r.traffic;
  const killText = t.kills
    .map(
      (k) =>
        `${k.replica} SIGKILL at ${s(k.signalAtMs)}` +
        (k.readyAgainAtMs !== null ? `, back at ${s(k.readyAgainAtMs)}` : k.restartedAtMs !== null ? ', restart not ready' : ', not restarted'),
    )
    .join('; ');
  const rows: Array<[string, string, string]> = [
    ['setup', `2 gateways + 2 assets replicas behind nginx ${r.setup.nginx}; ${r.setup.singles.join(', ')} ×1`, ''],
    ['', `MongoDB: ${r.setup.mongo}; Redis: ${r.setup.redis}; up in ${s(r.setup.startupMs)}`, ''],
    [
      'requests sent',
      `${n(t.sent)} in ${s(t.durationMs)} by ${t.clients} clients (${n(t.reads)} reads, ${n(t.writes)} writes); p50 ${t.p50Ms} ms, p99 ${t.p99Ms} ms`,
      '',
    ],
    ['kills', killText, ''],
    ['failed', `${n(t.failed)} (non-2xx, GraphQL errors or no answer)`, ''],
    ['  in flight at a kill', n(t.failedInFlight), ''],
    ['  beyond in-flight', n(t.failedBeyondInFlight), t.failedBeyondInFlight === 0 && t.sent > 0 ? 'PASS' : 'FAIL'],
    [
      'retried by nginx',
      `${n(t.retriedByNginx)} client requests on the other gateway, ${n(t.assetsRetriedByNginx)} subgraph requests on the other assets replica`,
      '',
    ],
    ...Object.entries(t.failuresByCause).map(([cause, count]): [string, string, string] => ['  cause', `${n(count)} × ${cause}`, '']),
    [
      'answered by',
      Object.entries(t.servedBy)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k} ${n(v)}` + (t.servedAfterRestart[k] ? ` (${n(t.servedAfterRestart[k])} after its restart)` : ''))
        .join(', '),
      '',
    ],
    [
      'rate limit (free, 60/min)',
      `${r.rateLimit.sent} sent round-robin, ${r.rateLimit.accepted} accepted (${Object.entries(r.rateLimit.acceptedBy)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}), ${r.rateLimit.refused} refused 429`,
      r.rateLimit.accepted === r.rateLimit.limit && r.rateLimit.other === 0 ? 'PASS' : 'FAIL',
    ],
    [
      'events (asset.upserted)',
      `${n(r.events.acknowledgedWrites)} acknowledged writes: ${n(r.events.inRiskRegister)} in riskRegister, ${n(r.events.inComplianceStatus)} in complianceStatus; caught up ${r.events.caughtUpAfterMs === null ? 'never' : `after ${s(r.events.caughtUpAfterMs)}`}`,
      r.events.missing.length === 0 && r.events.acknowledgedWrites > 0 && r.events.caughtUpAfterMs !== null ? 'PASS' : 'FAIL',
    ],
    ['processes left', r.leftoverProcesses.length ? r.leftoverProcesses.join(', ') : 'none', r.leftoverProcesses.length ? 'FAIL' : 'PASS'],
    ['result', r.pass ? `PASS in ${s(r.totalMs)}` : `FAIL in ${s(r.totalMs)}`, r.pass ? 'PASS' : 'FAIL'],
  ];
  const w0 = Math.max(...rows.map((row) => row[0].length));
  const w1 = Math.max(...rows.map((row) => row[1].length));
  const line = `${'─'.repeat(w0 + 2)}┼${'─'.repeat(w1 + 2)}┼──────`;
  const out = [`Linepack scale-out`, line];
  for (const [a, b, c] of rows) out.push(` ${a.padEnd(w0)} │ ${b.padEnd(w1)} │ ${c}`);
  out.push(line);
  if (!r.pass) out.push('', 'Why it failed:', ...r.reasons.map((reason) => `  - ${reason}`));
  return out.join('\n');
}
