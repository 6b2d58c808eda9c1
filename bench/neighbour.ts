/**
 * What bench:isolation and bench:fairness share: a victim tenant sampling one request at a time while another
 * tenant (the neighbour) loads the API from a thread of its own, and the table of the victim's latency per phase
 * as ratios to its baseline in the same run.
 */
import { Worker } from 'node:worker_threads';
import type { ProcessLoad } from './neighbour-stack';
import { percentile, printColumns } from './harness';

export interface Sample {
  ms: number;
  status: number;
  /** When the request started, ms since the phase began. */
  at: number;
}

async function send(url: string, init: RequestInit): Promise<Omit<Sample, 'at'>> {
  const started = performance.now();
  try {
    const res = await fetch(url, init);
    await res.arrayBuffer();
    return { ms: performance.now() - started, status: res.status };
  } catch {
    return { ms: performance.now() - started, status: 0 };
  }
}

export const graphqlRequest = (key: string, body: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
  body,
});

/** One request at a time with `pauseMs` between them, for `ms`, or until `done` when a function is given. */
export async function sampleFor(url: string, init: () => RequestInit, ms: number | (() => boolean), pauseMs = 50): Promise<Sample[]> {
  const samples: Sample[] = [];
  const begin = performance.now();
  const more = typeof ms === 'number' ? () => performance.now() < begin + ms : () => !ms();
  while (more()) {
    const at = performance.now() - begin;
    samples.push({ ...(await send(url, init())), at });
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  return samples;
}

/**
 * Plain JavaScript for the neighbour's thread: `connections` loops send the bodies round-robin until told to stop.
 * `{{n}}` in a body becomes a number new to each request, so a batch carries fresh idempotency keys each time.
 */
const NEIGHBOUR_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, key, bodies, connections } = workerData;
let running = true;
let sent = 0;
const answers = {};
parentPort.on('message', () => { running = false; });
async function loop(offset) {
  for (let i = offset; running; i++) {
    const n = sent++;
    const template = bodies[i % bodies.length];
    const body = template.includes('{{n}}') ? template.replaceAll('{{n}}', String(n)) : template;
    let status = 0;
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + key }, body });
      await res.arrayBuffer();
      status = res.status;
    } catch {}
    answers[status] = (answers[status] || 0) + 1;
  }
}
Promise.all(Array.from({ length: connections }, (_, i) => loop(i * 2))).then(() => parentPort.postMessage(answers));
`;

export interface Neighbour {
  /** Stops sending and resolves with how the neighbour's requests were answered: status → count. */
  stop(): Promise<Map<number, number>>;
}

/** The neighbour is another client, so it runs on its own thread: its sending is not billed to the server. */
export function startNeighbour(url: string, key: string, bodies: readonly string[], connections: number): Neighbour {
  const thread = new Worker(NEIGHBOUR_SOURCE, { eval: true, workerData: { url, key, bodies, connections } });
  const answered = new Promise<Record<string, number>>((resolve, reject) => {
    thread.once('message', resolve);
    thread.once('error', reject);
  });
  return {
    async stop() {
      thread.postMessage('stop');
      const answers = new Map(Object.entries(await answered).map(([status, n]) => [Number(status), n]));
      await thread.terminate();
      return answers;
    },
  };
}

export const describeAnswers = (answers: ReadonlyMap<number, number>) =>
  [...answers.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${n}× ${status === 0 ? 'no answer' : status}`)
    .join(', ') || 'none';

const failed = (s: Sample) => s.status >= 500 || s.status === 0;

/** The victim's phases as p50/p99 and their ratios to the first phase (the baseline), and its failures. */
export function printPhases(title: string, phases: readonly (readonly [string, readonly Sample[]])[], notes: string[] = []): void {
  const stats = (samples: readonly Sample[]) => {
    const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
    return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
  };
  const base = stats(phases[0]![1]);
  printColumns(
    title,
    ['phase', 'requests', 'p50 ms', 'p99 ms', 'p50 vs base', 'p99 vs base', 'failed'],
    phases.map(([name, samples]) => {
      const { p50, p99 } = stats(samples);
      return [
        name,
        String(samples.length),
        p50.toFixed(1),
        p99.toFixed(1),
        `${(p50 / base.p50).toFixed(2)}×`,
        `${(p99 / base.p99).toFixed(2)}×`,
        String(samples.filter(failed).length),
      ];
    }),
    notes,
  );
}

/** The slowest sample in each second of a phase: shows whether a slow p99 is one stall or a steady drag. */
export const slowestPerSecond = (samples: readonly Sample[]) => {
  const perSecond = new Map<number, number>();
  for (const s of samples) perSecond.set(Math.floor(s.at / 1000), Math.max(perSecond.get(Math.floor(s.at / 1000)) ?? 0, s.ms));
  return [...perSecond.values()].map((v) => v.toFixed(0)).join(' ');
};

/** Per process of the stack, the longest its event loop was held and the CPU it used in a phase: where the victim's time went. */
export const describeLoad = (load: ProcessLoad) =>
  [...load]
    .filter(([, { cpuMs }]) => cpuMs >= 50)
    .sort(([, a], [, b]) => b.cpuMs - a.cpuMs)
    .map(([name, { loopMaxMs, cpuMs }]) => `${name} ${(cpuMs / 1000).toFixed(1)} s CPU${loopMaxMs === null ? '' : `, loop held ≤ ${loopMaxMs.toFixed(0)} ms`}`)
    .join('; ');
