/**
 * `npm run bench:isolation`: can one tenant's abuse slow down another's? (issue 16)
 *
 * A victim tenant (enterprise, so it can sample often) reads a 50-asset page in a loop, first alone (baseline), then while an attacker with a valid
 * pro key sends the abusive requests of issue 16 from 4 connections (on a thread of its own, as another client
 * would be) as fast as its rate limit lets it, then
 * alone again (recovery). Prints the victim's p50/p99 per phase against the baseline, its 5xx count, and what
 * the attacker's requests were answered with.
 *
 *   npm run bench:isolation [-- --seconds 20]     (embedded in-memory MongoDB, or MONGODB_URI when set)
 * Target: victim p99 within 3× baseline while under abuse, no 5xx, recovered within 5 s of the abuse stopping.
 */
import { parseArgs } from 'node:util';
import { createAsset } from '../test/support/stack';
import { describeAnswers, graphqlRequest, printPhases, sampleFor, slowestPerSecond, startNeighbour } from './neighbour';
import { withNeighbourStack } from './neighbour-stack';

/** The requests of issue 16, each as a JSON body. */
function abusiveBodies(assetId: string): string[] {
  const aliases = (field: (i: number) => string) => Array.from({ length: 30 }, (_, i) => `a${i}: ${field(i)}`).join(' ');
  const items = Array.from({ length: 10_000 }, (_, i) => ({
    idempotencyKey: `abuse-${i}`,
    assetId,
    type: 'PRESSURE',
    value: 1,
    unit: 'KPA',
    observedAt: '2026-01-01T00:00:00Z',
    source: 'SCADA',
  }));
  return [
    // 1. the cost limit side-stepped with a variable
    JSON.stringify({
      query: `query($n: Int) { ${aliases(() => 'assets(first: $n) { edges { node { id measurements(first: $n) { edges { node { id value } } } } } }')} }`,
      variables: { n: 500 },
    }),
    // 2. a 60,000-character filter
    JSON.stringify({ query: 'query($s: String) { assets(filter: { nameContains: $s }) { totalCount } }', variables: { s: 'a'.repeat(60_000) } }),
    // 3. aliased batch mutations sharing one 10,000-item variable
    JSON.stringify({
      query: `mutation($i: [MeasurementInput!]!) { ${aliases(() => 'recordMeasurements(input: $i) { insertedCount }')} }`,
      variables: { i: items },
    }),
    // 4. client mistakes that used to be 500s
    JSON.stringify({ query: '{ me { id ' }),
    JSON.stringify({ query: '{ a '.repeat(5_000) + '}'.repeat(5_000) }),
    JSON.stringify({ query: 'mutation { createAsset(input: { type: PIPELINE, name: "x", maopKpa: 1e309 }) { id } }' }),
    // 5. unbounded inputs
    JSON.stringify({ query: 'query($id: ID!) { asset(id: $id) { id } }', variables: { id: 'x'.repeat(1_000_000) } }),
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' }, topology: { type: 'string', default: 'single' } } });
  const seconds = Number(values.seconds);
  if (values.topology !== 'processes' && values.topology !== 'single') throw new Error('--topology is processes (a deployment) or single (npm start)');
  await withNeighbourStack({ topology: values.topology, credentialCacheTtlSeconds: 30 }, async (stack) => {
    console.log(`Topology: ${stack.description}`);
    // Enterprise (uncounted), so it can sample 20 times a second: a p99 of ~100 samples would just be the maximum.
    const victim = await stack.tenantWithKey({ tier: 'ENTERPRISE', name: 'victim' });
    const attacker = await stack.tenantWithKey({ tier: 'PRO', name: 'attacker' });
    const victimLine = await createAsset(stack.gatewayUrl, victim.apiKey, { type: 'PIPELINE', name: 'Victim line' });
    for (let i = 0; i < 50; i++) await createAsset(stack.gatewayUrl, victim.apiKey, { type: 'SEGMENT', name: `Segment ${i}`, parentId: victimLine.id });
    const attackerAsset = (await createAsset(stack.gatewayUrl, attacker.apiKey, { type: 'PIPELINE', name: 'Attacker line' })).id;
    const read = JSON.stringify({ query: '{ assets(first: 50) { totalCount edges { node { id name type status } } } }' });
    const victimFor = (ms: number) => sampleFor(stack.gatewayUrl, () => graphqlRequest(victim.apiKey, read), ms);

    // Warm-up: first requests compile code paths and fill caches; they are not part of any phase.
    await victimFor(3_000);
    console.log(`Baseline: the victim alone for ${seconds} s…`);
    const baseline = await victimFor(seconds * 1000);

    console.log(`Abuse: the attacker's requests from 4 connections for ${seconds} s…`);
    const attack = startNeighbour(stack.gatewayUrl, attacker.apiKey, abusiveBodies(attackerAsset), 4);
    await new Promise((r) => setTimeout(r, 200));
    const underAbuse = await victimFor(seconds * 1000);
    const answers = await attack.stop();

    console.log('Recovery: the victim alone again for 5 s…');
    const recovery = await victimFor(5_000);

    printPhases(
      "Isolation: a second tenant's steady read while one tenant abuses the API",
      [
        ['victim alone (baseline)', baseline],
        ['victim under abuse', underAbuse],
        ['victim, 5 s after the abuse', recovery],
      ],
      [
        `\nThe victim's slowest request in each second of the abuse (ms): ${slowestPerSecond(underAbuse)}`,
        `The attacker's ${[...answers.values()].reduce((a, b) => a + b, 0)} requests were answered: ${describeAnswers(answers)}.`,
        'Ratios compare phases of this run only. Target: p99 under abuse ≤ 3× baseline, no 5xx, recovery p99 ≤ 3× baseline.',
      ],
    );
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
