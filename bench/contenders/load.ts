/**
 * One load run: autocannon (programmatic, in the benchmark's process) sends a plan's requests over `connections`
 * keep-alive connections for `seconds`; the contender's CPU (its process and children, from /proc) and the
 * subgraphs' are read before and after. Every answer is looked at: a non-2xx status or a body with an `errors` member
 * counts as failed, never as throughput. Latencies are kept exactly (autocannon's histogram has 1 ms buckets, too
 * coarse for a 1-connection p50).
 */
import autocannon from 'autocannon';
import { postGraphQL, type RequestPlan } from './workload';

export interface LoadOptions {
  connections: number;
  seconds: number;
}

/** CPU readers (cumulative ms): the contender's process tree (null for a subgraph called directly) and the subgraphs'. */
export interface CpuProbes {
  contender: (() => number) | null;
  subgraphs: () => number;
}

export interface LoadMeasurement {
  connections: number;
  /** Seconds autocannon ran. */
  durationS: number;
  /** Answers that were 2xx without GraphQL errors. */
  ok: number;
  /** Answers that were not (non-2xx, or `errors` in the body), plus socket errors and timeouts. */
  failed: number;
  firstFailure: string | null;
  /** ok / durationS. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** The contender's CPU per ok answer (ms); null for a subgraph called directly. */
  contenderCpuMsPerReq: number | null;
  /** The five subgraph processes' CPU per ok answer (ms). */
  subgraphCpuMsPerReq: number;
  /** The load generator's (this process's) CPU over the run, as a share of one core. */
  loadGeneratorCpuShare: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Sends one request of the plan outside the load and checks the answer; throws with what is wrong (fail loudly). */
export async function validatePlan(plan: RequestPlan, what: string): Promise<void> {
  const request = plan.next();
  const { status, answer, text } = await postGraphQL(plan.url, request.body, request.headers, 60_000);
  const problem = status !== 200 ? `HTTP ${status}` : answer.errors?.length ? `GraphQL errors` : !answer.data ? 'no data' : (plan.check(answer) ?? null);
  if (problem) throw new Error(`${what}: the sample answer is not a real one (${problem}): ${text.slice(0, 600)}`);
}

export async function runLoad(plan: RequestPlan, options: LoadOptions, cpu: CpuProbes): Promise<LoadMeasurement> {
  let latencies = new Float64Array(65_536);
  let count = 0;
  let failedAnswers = 0;
  let firstFailure: string | null = null;
  const contenderBefore = cpu.contender?.() ?? 0;
  const subgraphsBefore = cpu.subgraphs();
  const selfBefore = process.cpuUsage();
  const wallBefore = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: plan.url,
        connections: options.connections,
        duration: options.seconds,
        pipelining: 1,
        timeout: 30,
        sampleInt: 250,
        method: 'POST',
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => {
              const next = plan.next();
              return { ...request, headers: next.headers, body: next.body };
            },
            onResponse: (status, body) => {
              if (status >= 200 && status < 300 && !body.includes('"errors"')) return;
              failedAnswers++;
              firstFailure ??= `HTTP ${status}: ${body.slice(0, 400)}`;
            },
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = responseTime;
    });
  });
  const wallMs = performance.now() - wallBefore;
  const self = process.cpuUsage(selfBefore);
  const contenderCpu = cpu.contender ? cpu.contender() - contenderBefore : null;
  const subgraphCpu = cpu.subgraphs() - subgraphsBefore;
  const sorted = latencies.subarray(0, count).sort();
  const transportFailures = result.errors; // autocannon counts timeouts among its errors
  const ok = Math.max(0, count - failedAnswers);
  if (transportFailures > 0) firstFailure ??= `${result.errors} socket errors (${result.timeouts} timeouts)`;
  const durationS = result.duration > 0 ? result.duration : wallMs / 1000;
  return {
    connections: options.connections,
    durationS,
    ok,
    failed: failedAnswers + transportFailures,
    firstFailure,
    rps: ok / durationS,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    contenderCpuMsPerReq: contenderCpu === null ? null : contenderCpu / Math.max(1, ok),
    subgraphCpuMsPerReq: subgraphCpu / Math.max(1, ok),
    loadGeneratorCpuShare: (self.user + self.system) / 1000 / wallMs,
  };
}
