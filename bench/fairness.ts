/**
 * `npm run bench:fairness [-- --seconds 20] [-- --phases batches,query,import] [-- --features 100000]
 *                          [-- --topology processes|single] [-- --gateway-workers 1] [-- --cpu-prof DIR]
 *                          [-- --between quiet|none]`:
 * does one tenant's heaviest legal work stall another tenant? (issue 31)
 *
 * The stack is what a deployment runs unless `--topology single` (bench/neighbour-stack.ts): every subgraph and the
 * gateway its own process, the gateway with one worker (one event loop for every tenant, the hardest case). After the
 * seed's events are consumed (the stack idle), tenant B (enterprise, so it can sample 20 times a second) reads, one
 * request at a time each, a 50-asset page (the gateway and the assets subgraph) and the 20 latest readings of one of
 * its assets (also the measurements subgraph, which A's reads and writes load), and asks `/auth/introspect` about its
 * key every 250 ms (the auth service's own budget: it must never answer 503). Phases:
 *   baseline      B alone;
 *   batches       tenant A (pro) sends 10,000-item recordMeasurements back to back, fresh keys each time;
 *   query         A sends the most expensive query the cost limit allows, from 4 connections (the gateway runs one
 *                 of a tenant's expensive operations at a time and queues 4: gateway/src/expensive-operations.ts);
 *   import        A imports a generated 100,000-feature ILI listing (`--features`) through the API as the CLI does
 *                 (upload in parts, startIliImport, poll the job); the phase lasts from the first part to the job's end;
 *   recovery      B alone again.
 * Before each of A's phases after the first the stack is left to finish A's earlier work (`--between quiet`, the
 * default: the batches' events consumed by analytics and compliance), so each phase measures B under that one kind of
 * work; `--between none` runs them back to back, each on the remains of the one before.
 * Prints B's p50/p99 per read and phase as ratios to its baseline in the same run, B's failures, the auth probe's
 * answers, how A's requests were answered, and per process of the stack the CPU it used and the longest its event loop
 * was held (with `--cpu-prof`, each phase's window on the profiles' clock). Target: B's p99 ≤ 3× baseline, 0 failures
 * for B, auth never 503.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { importListing, type IliImportResult } from '@linepack/lib/ili/client';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { TALLY_KINDS } from '@linepack/lib/ili/listing';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { createAsset, graphql } from '../test/support/stack';
import { describeAnswers, describeLoad, graphqlRequest, printPhases, sampleFor, slowestPerSecond, startNeighbour, type Sample } from './neighbour';
import { withNeighbourStack, type NeighbourStack, type ProcessLoad, type Topology } from './neighbour-stack';

const BATCH_ITEMS = 10_000;
const A_ASSETS = 500;

const RECORD = 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount duplicateCount } }';
/** A's reads find this many measurements per asset (the expensive query's pages are full up to here). */
const SEED_BATCHES = 10;

/** A's heaviest legal write: 10,000 new readings spread over its assets (the batch size limit). */
function batchItems(assetIds: readonly string[], keyPrefix: string) {
  return Array.from({ length: BATCH_ITEMS }, (_, i) => ({
    idempotencyKey: `${keyPrefix}-${i}`,
    assetId: assetIds[i % assetIds.length],
    type: 'PRESSURE',
    value: 5000 + (i % 100),
    unit: 'KPA',
    observedAt: '2026-01-01T00:00:00Z',
    source: 'SCADA',
  }));
}
const batchBody = (assetIds: readonly string[]) => JSON.stringify({ query: RECORD, variables: { i: batchItems(assetIds, 'fair-{{n}}') } });

/** A's most expensive legal read: 500 assets × up to 490 measurements each (200 seeded, more as its batches land), just under the cost limit of 250,000. */
const EXPENSIVE_QUERY = JSON.stringify({
  query: '{ assets(first: 500) { totalCount edges { node { id name measurements(first: 240) { totalCount edges { node { id value observedAt } } } } } } }',
});

interface PhaseSamples {
  page: Sample[];
  readings: Sample[];
  auth: Sample[];
  load: ProcessLoad;
  windowUs: [bigint, bigint];
}

/** A generated listing in the POF layout the importer reads by default, and how many features and tally rows it has. */
async function generatedListing(dir: string, features: number): Promise<{ file: string; features: number; tallyItems: number; runDate: string }> {
  const { runA } = generateTwoRunListing({ features, seed: 31 });
  const file = path.join(dir, 'fairness-run.csv');
  await writePofListingCsv(runA.rows, file);
  const featureRows = runA.rows.filter((row) => !TALLY_KINDS.has(row.kind)).length;
  return { file, features: featureRows, tallyItems: runA.rows.length - featureRows, runDate: `${runA.runDate}T00:00:00Z` };
}

/** The stack's CPU over one 2-second window, all processes together (ms), and each process's. */
async function cpuOver2s(stack: NeighbourStack): Promise<{ totalMs: number; busy: string }> {
  await stack.mark();
  await new Promise((r) => setTimeout(r, 2_000));
  const load = [...(await stack.load())];
  const totalMs = load.reduce((sum, [, { cpuMs }]) => sum + cpuMs, 0);
  const busy = load.sort((x, y) => y[1].cpuMs - x[1].cpuMs).map(([name, { cpuMs }]) => `${name} ${cpuMs.toFixed(0)} ms`);
  return { totalMs, busy: busy.join(', ') };
}

/**
 * What the stack uses with nothing to do (its timers, pollers and metrics, and the scrapes that measure it): the least
 * CPU of five 2-second windows. "Quiet" is measured against it, not against a fixed figure: a fixed 200 ms was below an
 * idle stack's own floor once the outbox relays and consumers polled on their own threads, and every wait then ran
 * its full 10 minutes.
 */
async function idleFloor(stack: NeighbourStack): Promise<number> {
  let least = Infinity;
  for (let i = 0; i < 5; i++) least = Math.min(least, (await cpuOver2s(stack)).totalMs);
  return least;
}

/**
 * Waits until the stack's processes use less than `idleCpuMs` of CPU over 2 s (at most 10 minutes); how long it took.
 * When it gives up it says which processes were still busy, so a measurement that follows is known to be one under load.
 */
async function untilQuiet(stack: NeighbourStack, idleCpuMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { totalMs, busy } = await cpuOver2s(stack);
    if (totalMs < idleCpuMs) break;
    if (performance.now() - started >= 600_000) {
      console.log(`WARNING: the stack was never quiet in 10 minutes; CPU in its last 2 s: ${busy} (quiet is < ${idleCpuMs.toFixed(0)} ms in all).`);
      break;
    }
  }
  return performance.now() - started;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '20' },
      phases: { type: 'string', default: 'batches,query,import' },
      between: { type: 'string', default: 'quiet' },
      features: { type: 'string', default: '100000' },
      topology: { type: 'string', default: 'processes' },
      'gateway-workers': { type: 'string', default: '1' },
      'cpu-prof': { type: 'string' },
    },
  });
  const seconds = Number(values.seconds);
  const phases = new Set(values.phases.split(','));
  if (values.topology !== 'processes' && values.topology !== 'single') throw new Error('--topology is processes (a deployment) or single (npm start)');
  if (values.between !== 'quiet' && values.between !== 'none') throw new Error('--between is quiet (each phase on an idle stack) or none (back to back)');
  const listingDir = await mkdtemp(path.join(os.tmpdir(), 'bench-fairness-'));
  try {
    await measure(seconds, phases, Number(values.features), listingDir, values.between === 'quiet', {
      topology: values.topology,
      gatewayWorkers: Number(values['gateway-workers']),
      cpuProfileDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined,
    });
  } finally {
    await rm(listingDir, { recursive: true, force: true });
  }
}

async function measure(
  seconds: number,
  phases: ReadonlySet<string>,
  importFeatures: number,
  listingDir: string,
  quietBetweenPhases: boolean,
  stackOptions: { topology: Topology; gatewayWorkers: number; cpuProfileDir: string | undefined },
): Promise<void> {
  const listing = phases.has('import') ? await generatedListing(listingDir, importFeatures) : null;
  await withNeighbourStack({ ...stackOptions, credentialCacheTtlSeconds: 30 }, async (stack) => {
    console.log(`Topology: ${stack.description}`);
    // Quiet, below: within a tenth of a core of what the stack uses with nothing to do (a fifth more for noise).
    const floorMs = await idleFloor(stack);
    const idleCpuMs = floorMs * 1.2 + 200;
    console.log(`The idle stack uses ${floorMs.toFixed(0)} ms of CPU per 2 s; "quiet" below is under ${idleCpuMs.toFixed(0)} ms.`);
    const b = await stack.tenantWithKey({ tier: 'ENTERPRISE', name: 'tenant B' });
    // A's plan allows an enterprise key for seeding (seeding is not what is measured); A's measured key is pro.
    const aTenant = await stack.tenantWithKey({ tier: 'ENTERPRISE', name: 'tenant A' });
    const aSeedKey = aTenant.apiKey;
    const a = { apiKey: await stack.keyFor(aTenant.tenantId, ['assets:read', 'assets:write', 'measurements:read', 'measurements:write'], 'PRO') };
    const bLine = await createAsset(stack.gatewayUrl, b.apiKey, { type: 'PIPELINE', name: 'B line' });
    for (let i = 0; i < 50; i++) await createAsset(stack.gatewayUrl, b.apiKey, { type: 'SEGMENT', name: `B segment ${i}`, parentId: bLine.id });
    await stack.knownToMeasurements(bLine.id);
    const bReadings = await graphql(stack.gatewayUrl, RECORD, { apiKey: b.apiKey, variables: { i: batchItems([bLine.id], 'b-seed').slice(0, 200) } });
    if (bReadings.body.errors) throw new Error(`seeding B failed: ${JSON.stringify(bReadings.body.errors).slice(0, 500)}`);
    const aLine = await createAsset(stack.gatewayUrl, aSeedKey, { type: 'PIPELINE', name: 'A line' });
    const aAssets: string[] = [];
    for (let i = 0; i < A_ASSETS - 1; i++)
      aAssets.push((await createAsset(stack.gatewayUrl, aSeedKey, { type: 'SEGMENT', name: `A segment ${i}`, parentId: aLine.id })).id);
    console.log(`Seeding tenant A: ${A_ASSETS} assets, ${(SEED_BATCHES * BATCH_ITEMS).toLocaleString('en')} readings…`);
    // The measurements subgraph learns of new assets from their events: wait until it knows every one, then send each batch once.
    for (const id of aAssets) await stack.knownToMeasurements(id);
    // In 2,000-item batches, each retried until stored (idempotent keys): seeding on a busy machine must not fail the run.
    for (let n = 0; n < SEED_BATCHES; n++) {
      for (let part = 0; part < BATCH_ITEMS; part += 2_000) {
        const items = batchItems(aAssets, `seed-${n}`).slice(part, part + 2_000);
        for (let attempt = 1; ; attempt++) {
          const seeded = await graphql(stack.gatewayUrl, RECORD, { apiKey: aSeedKey, variables: { i: items } });
          if (!seeded.body.errors) break;
          if (attempt === 5) throw new Error(`seeding failed: ${JSON.stringify(seeded.body.errors).slice(0, 500)}`);
        }
      }
    }
    // The seed's 100,000 measurement events are still being consumed (analytics, compliance): a baseline measured
    // meanwhile would be one under load. Wait until the stack is idle.
    const quietMs = await untilQuiet(stack, idleCpuMs);
    console.log(`The stack was quiet after ${(quietMs / 1000).toFixed(0)} s (the seed's events consumed).`);

    // B's two simple reads, each one request at a time: a page of assets (the gateway and the assets subgraph), and
    // the latest readings of one asset (the gateway, assets and measurements, the subgraph A's reads and writes load).
    const bReads = {
      page: JSON.stringify({ query: '{ assets(first: 50) { totalCount edges { node { id name type status } } } }' }),
      readings: JSON.stringify({
        query: `{ asset(id: "${bLine.id}") { id measurements(first: 20) { edges { node { id value observedAt } } } } }`,
      }),
    };
    const introspectUrl = new URL('/auth/introspect', stack.gatewayUrl).toString();
    // How long each process's event loop was held and what CPU each used: whether B waited for a loop, or for CPU.
    // The phase's window on the monotonic clock CPU profiles use (--cpu-prof), to read a profile phase by phase.
    const phase = async (ms: number | (() => boolean)): Promise<PhaseSamples> => {
      await stack.mark();
      const from = process.hrtime.bigint() / 1000n;
      const [page, readings, auth] = await Promise.all([
        sampleFor(stack.gatewayUrl, () => graphqlRequest(b.apiKey, bReads.page), ms),
        sampleFor(stack.gatewayUrl, () => graphqlRequest(b.apiKey, bReads.readings), ms),
        sampleFor(introspectUrl, () => ({ method: 'GET', headers: { authorization: `Bearer ${b.apiKey}` } }), ms, 250),
      ]);
      return { page, readings, auth, windowUs: [from, process.hrtime.bigint() / 1000n], load: await stack.load() };
    };

    await phase(3_000); // warm-up
    console.log(`Baseline: tenant B alone for ${seconds} s…`);
    const results: [string, PhaseSamples, Map<number, number> | null][] = [['B alone (baseline)', await phase(seconds * 1000), null]];
    let phasesOfA = 0;
    // A's earlier phase finished (its events consumed), unless phases run back to back.
    const afterEarlierWork = async () => {
      if (phasesOfA++ === 0 || !quietBetweenPhases) return;
      const ms = await untilQuiet(stack, idleCpuMs);
      console.log(`(The stack was quiet ${(ms / 1000).toFixed(0)} s after A's earlier phase.)`);
    };
    const loaded = async (name: string, bodies: string[], connections: number) => {
      await afterEarlierWork();
      console.log(`${name} for ${seconds} s…`);
      const neighbour = startNeighbour(stack.gatewayUrl, a.apiKey, bodies, connections);
      await new Promise((r) => setTimeout(r, 200));
      const samples = await phase(seconds * 1000);
      results.push([name, samples, await neighbour.stop()]);
    };
    if (phases.has('batches')) await loaded(`A: ${BATCH_ITEMS.toLocaleString('en')}-item batches back to back`, [batchBody(aAssets)], 1);
    if (phases.has('query')) await loaded('A: the most expensive legal query ×4', [EXPENSIVE_QUERY], 4);
    let imported: { result: IliImportResult; ms: number } | null = null;
    if (listing) {
      await afterEarlierWork();
      const name = `A: a ${importFeatures.toLocaleString('en')}-feature ILI import`;
      console.log(`${name}, from its first part to the job's end…`);
      let finished = false;
      const started = performance.now();
      const importing = importListing({
        gatewayUrl: stack.gatewayUrl,
        apiKey: a.apiKey,
        file: listing.file,
        assetId: aAssets[0]!,
        run: { vendor: 'Synthetic ILI Co.', toolTechnologies: ['MFL'], runDate: listing.runDate },
        // Within the pro tier's 300 requests a minute.
        pollMs: 1_000,
      }).finally(() => (finished = true));
      const [samples, result] = await Promise.all([phase(() => finished), importing]);
      imported = { result, ms: performance.now() - started };
      results.push([name, samples, null]);
      if (result.state !== 'SUCCEEDED' || result.counts.features !== listing.features || result.counts.tallyItems !== listing.tallyItems)
        throw new Error(`the import did not store the listing: ${JSON.stringify({ ...result, errors: result.errors.slice(0, 3) })}`);
    }
    console.log('Recovery: B alone again for 5 s…');
    results.push(['B alone, after', await phase(5_000), null]);

    const authAnswers = (samples: readonly Sample[]) => {
      const counts = new Map<number, number>();
      for (const s of samples) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
      return describeAnswers(counts);
    };
    console.log(`\nTopology: ${stack.description}`);
    printPhases(
      "Tenant B's page of 50 assets (gateway, assets) while tenant A runs its heaviest legal work",
      results.map(([name, samples]) => [name, samples.page] as const),
    );
    printPhases(
      "Tenant B's 20 latest readings of an asset (gateway, assets, measurements) while tenant A runs its heaviest legal work",
      results.map(([name, samples]) => [name, samples.readings] as const),
      [
        '',
        ...results.map(
          ([name, samples, answers]) =>
            `${name}: B's slowest per second (ms) ${slowestPerSecond([...samples.page, ...samples.readings])}; auth probe ${authAnswers(samples.auth)}${answers ? `; A answered ${describeAnswers(answers)}` : ''}\n  ${describeLoad(samples.load)}${stackOptions.cpuProfileDir ? `\n  monotonic µs ${samples.windowUs[0]}–${samples.windowUs[1]}` : ''}`,
        ),
        ...(imported
          ? [
              `The import stored ${imported.result.counts.features.toLocaleString('en')} features and ${imported.result.counts.tallyItems.toLocaleString('en')} tally items in ${(imported.ms / 1000).toFixed(1)} s (upload, check, write).`,
            ]
          : []),
        quietBetweenPhases
          ? "Each of A's phases began on an idle stack (--between quiet); B alone, after follows the last one directly."
          : "A's phases ran back to back (--between none): each also carries what the one before left to do.",
        'Ratios compare phases of this run only. Target: B p99 ≤ 3× baseline, 0 failed for B, the auth probe never 503.',
      ],
    );
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
