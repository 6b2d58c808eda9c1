import { createAsset, graphql, mongoCommandsDuring, startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let key: string;
let segmentId: string;

type Err = { message: string; extensions?: Record<string, unknown> };
const call = (query: string, variables: Record<string, unknown> = {}) => graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey: key, variables });
const record = (input: unknown[]) =>
  call('mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount duplicateCount ids } }', { i: input });
const countOf = async () => (await call('{ pipelineSummary { measurementCount } }')).body.data!['pipelineSummary'].measurementCount as number;

const RUN_START = Date.parse('2026-02-01T00:00:00Z');
/** An ILI run of n metal-loss anomalies, one a minute of odometer time. */
const iliBatch = (n: number, run = 'run-2026-02') =>
  Array.from({ length: n }, (_, i) => ({
    idempotencyKey: `${run}-${i}`,
    assetId: segmentId,
    type: 'ILI_ANOMALY',
    source: 'ILI',
    observedAt: new Date(RUN_START + i * 60_000).toISOString(),
    runId: run,
    featureType: 'METAL_LOSS',
    surface: i % 3 ? 'EXTERNAL' : 'INTERNAL',
    odometerM: i * 2.5,
    clockDeg: (i * 37) % 360,
    depthPctWt: 5 + (i % 60),
    lengthMm: 20 + (i % 200),
    widthMm: 15 + (i % 90),
    value: 5 + (i % 60),
    unit: 'PERCENT_WT',
  }));

beforeAll(async () => {
  // The batches here take seconds on a quiet machine and tens of seconds on a busy one: the gateway's deadline (30 s
  // by default; deadline.test.ts tests it) is set beyond that, so this suite asserts what is stored, not how fast.
  stack = await startTestStack({ monitorCommands: true, requestTimeoutMs: 150_000 });
  key = (await stack.tenantWithKey()).apiKey;
  const line = await createAsset(stack.gatewayUrl, key, { type: 'PIPELINE', name: 'Line 500' });
  segmentId = (await createAsset(stack.gatewayUrl, key, { type: 'SEGMENT', name: 'Line 500 · MP 0–10', parentId: line.id })).id;
});
afterAll(async () => {
  await stack?.stop();
});

describe('a 5,000-anomaly ILI batch', () => {
  let firstIds: string[];

  it('is stored whole in one call', async () => {
    const res = await record(iliBatch(5_000));
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!['recordMeasurements']).toMatchObject({ insertedCount: 5_000, duplicateCount: 0 });
    firstIds = res.body.data!['recordMeasurements'].ids;
    expect(new Set(firstIds).size).toBe(5_000);
    expect(await countOf()).toBe(5_000);
  }, 180_000);

  it('pages newest first, every anomaly exactly once', async () => {
    const seen = new Set<string>();
    let after: string | null = null;
    let previous = Infinity;
    for (;;) {
      const res: Awaited<ReturnType<typeof call>> = await call(
        `query($id: ID!, $after: String) { asset(id: $id) { measurements(type: ILI_ANOMALY, first: 500, after: $after) {
           totalCount edges { node { id observedAt } } pageInfo { hasNextPage endCursor } } } }`,
        { id: segmentId, after },
      );
      const page = res.body.data!['asset'].measurements;
      expect(page.totalCount).toBe(5_000);
      for (const { node } of page.edges as { node: { id: string; observedAt: string } }[]) {
        const t = Date.parse(node.observedAt);
        expect(t).toBeLessThan(previous);
        previous = t;
        seen.add(node.id);
      }
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen.size).toBe(5_000);
  }, 180_000);

  it('reads a later page from the index at its cursor, in index order, stopped at the page size', async () => {
    const pageOf = (after: string | null) =>
      call(
        `query($id: ID!, $after: String) { asset(id: $id) { measurements(type: ILI_ANOMALY, first: 100, after: $after) {
           edges { node { id } } pageInfo { endCursor } } } }`,
        { id: segmentId, after },
      );
    const first = await pageOf(null);
    const mongo = stack.subgraphs.measurements.mongo!;
    const commands = await mongoCommandsDuring(mongo, () => pageOf(first.body.data!['asset'].measurements.pageInfo.endCursor));
    const find = commands.find((c) => c.commandName === 'find' && c.command['find'] === 'measurements')!;
    expect(find).toBeDefined();
    // The same command, explained by the server that ran it (a real MongoDB, or the embedded server's QueryPlanner).
    const plan = JSON.stringify(
      await mongo
        .db(find.databaseName)
        .collection('measurements')
        .find(find.command['filter'])
        .sort(find.command['sort'])
        .limit(find.command['limit'])
        .explain('queryPlanner'),
    );
    expect(plan).toContain('tenant_asset_type_time');
    expect(plan).not.toContain('COLLSCAN');
    expect(plan).not.toContain('"SORT"');
    // Bounded at the cursor's instant: the embedded planner says so, MongoDB shows the observedAt bounds.
    expect(plan).toMatch(/"linepackRange":true|"observedAt":\["\[new Date\(\d+\)/);
  });

  it('answers a time-range query', async () => {
    const from = new Date(RUN_START + 100 * 60_000).toISOString();
    const to = new Date(RUN_START + 200 * 60_000).toISOString();
    const res = await call(
      'query($id: ID!, $from: DateTime, $to: DateTime) { asset(id: $id) { measurements(from: $from, to: $to, first: 5) { totalCount edges { node { observedAt } } } } }',
      {
        id: segmentId,
        from,
        to,
      },
    );
    const m = res.body.data!['asset'].measurements;
    expect(m.totalCount).toBe(100); // [from, to): minutes 100…199
    expect(m.edges[0].node.observedAt).toBe(new Date(RUN_START + 199 * 60_000).toISOString());
  });

  it('stores nothing twice when the same batch is sent again', async () => {
    const res = await record(iliBatch(5_000));
    expect(res.body.data!['recordMeasurements']).toMatchObject({ insertedCount: 0, duplicateCount: 5_000 });
    expect(res.body.data!['recordMeasurements'].ids).toEqual(firstIds);
    expect(await countOf()).toBe(5_000);
  }, 180_000);

  it('knows the latest measurement', async () => {
    const res = await call(`{ asset(id: "${segmentId}") { latestMeasurement(type: ILI_ANOMALY) { observedAt runId } } }`);
    expect(res.body.data!['asset'].latestMeasurement).toEqual({ observedAt: new Date(RUN_START + 4_999 * 60_000).toISOString(), runId: 'run-2026-02' });
  });
});

describe('validation', () => {
  it('rejects a batch with bad items whole, listing every bad index, and stores nothing', async () => {
    const before = await countOf();
    const batch = iliBatch(10, 'run-bad');
    batch[3] = { ...batch[3]!, unit: 'MV' };
    batch[7] = { ...batch[7]!, depthPctWt: 140 };
    (batch[8] as Record<string, unknown>)['observedAt'] = new Date(Date.now() + 86_400_000).toISOString();
    const res = await record(batch);
    const error = res.body.errors?.[0] as Err;
    expect(error.extensions?.['code']).toBe('BAD_USER_INPUT');
    const fields = (error.extensions?.['violations'] as { field: string }[]).map((v) => v.field);
    expect(fields).toEqual(['input[3].unit', 'input[7].depthPctWt', 'input[8].observedAt']);
    expect(await countOf()).toBe(before);
  });

  it.each([
    [{ type: 'PRESSURE', value: 5_000, unit: 'MV', source: 'SCADA' }, 'input.unit', 'KPA'],
    [{ type: 'PRESSURE', source: 'SCADA' }, 'input.value', 'required'],
    [{ type: 'CP_PIPE_TO_SOIL', value: -85_000, unit: 'MV', source: 'FIELD' }, 'input.value', 'from -5000 to 2000'],
    [{ type: 'ILI_ANOMALY', value: 20, unit: 'PERCENT_WT', source: 'FIELD' }, 'input.source', 'ILI'],
  ])('names the field and the rule for %j', async (item, field, rule) => {
    const res = await call('mutation($i: MeasurementInput!) { recordMeasurement(input: $i) { insertedCount } }', {
      i: { idempotencyKey: `single-${field}-${rule}`, assetId: segmentId, observedAt: '2026-01-01T00:00:00Z', ...item },
    });
    const error = res.body.errors?.[0] as Err;
    expect(error.extensions?.['code']).toBe('BAD_USER_INPUT');
    expect((error.extensions?.['violations'] as { field: string; message: string }[]).some((v) => v.field === field && v.message.includes(rule))).toBe(true);
  });

  it('refuses more than 10,000 items', async () => {
    const res = await record(
      Array.from({ length: 10_001 }, (_, i) => ({
        idempotencyKey: `x${i}`,
        assetId: segmentId,
        type: 'PATROL',
        observedAt: '2026-01-01T00:00:00Z',
        source: 'FIELD',
      })),
    );
    expect((res.body.errors?.[0] as Err).message).toContain('at most 10000');
  }, 180_000);

  it('refuses a repeated idempotencyKey within one batch', async () => {
    const batch = iliBatch(2, 'run-dup');
    batch[1] = { ...batch[1]!, idempotencyKey: batch[0]!.idempotencyKey };
    const res = await record(batch);
    expect((res.body.errors?.[0] as Err).extensions?.['field']).toBe('input[1].idempotencyKey');
  });
});

it('counts inspection records for latestInspectionAt', async () => {
  await record([{ idempotencyKey: 'cp-2026', assetId: segmentId, type: 'CP_SURVEY', observedAt: '2026-06-15T00:00:00Z', source: 'FIELD' }]);
  const res = await call('{ pipelineSummary { latestInspectionAt } }');
  expect(res.body.data!['pipelineSummary'].latestInspectionAt).toBe('2026-06-15T00:00:00.000Z');
});

describe('anomaly details the repair conditions read', () => {
  // The segment is created in beforeAll: `single` adds it.
  const dent = {
    type: 'ILI_ANOMALY',
    source: 'ILI',
    observedAt: '2026-03-01T00:00:00Z',
    runId: 'run-dents',
    featureType: 'DENT',
    odometerM: 120.5,
    clockDeg: 10,
  };
  const single = (input: Record<string, unknown>) =>
    call('mutation($i: MeasurementInput!) { recordMeasurement(input: $i) { ids } }', { i: { assetId: segmentId, ...input } });
  const violationsOf = (res: Awaited<ReturnType<typeof call>>) =>
    ((res.body.errors?.[0] as Err | undefined)?.extensions?.['violations'] as { field: string; message: string }[] | undefined) ?? [];

  it('stores a dent with its depth as % of diameter, its indications and its weld interaction, and reads them back', async () => {
    const res = await single({
      ...dent,
      idempotencyKey: 'dent-1',
      dentDepthPctOd: 6.5,
      dentHasMetalLoss: true,
      dentHasCracking: false,
      dentHasStressRiser: false,
      interactsWithGirthWeld: true,
      interactsWithSeamWeld: false,
    });
    expect(res.body.errors).toBeUndefined();
    const id = res.body.data!['recordMeasurement'].ids[0] as string;
    const read = await call(
      `query($id: ID!) { measurement(id: $id) { dentDepthPctOd dentHasMetalLoss dentHasCracking dentHasStressRiser
         interactsWithGirthWeld interactsWithSeamWeld atPipelineCrossing metalLossKind } }`,
      { id },
    );
    expect(read.body.data!['measurement']).toEqual({
      dentDepthPctOd: 6.5,
      dentHasMetalLoss: true,
      dentHasCracking: false,
      dentHasStressRiser: false,
      interactsWithGirthWeld: true,
      interactsWithSeamWeld: false,
      atPipelineCrossing: null,
      metalLossKind: null,
    });
  });

  it('stores the kind of a metal-loss feature and whether it lies at a pipeline crossing', async () => {
    const res = await single({
      ...dent,
      idempotencyKey: 'ml-kind-1',
      featureType: 'METAL_LOSS',
      depthPctWt: 55,
      lengthMm: 400,
      metalLossKind: 'GENERAL_CORROSION',
      atPipelineCrossing: true,
    });
    expect(res.body.errors).toBeUndefined();
    const read = await call('query($id: ID!) { measurement(id: $id) { metalLossKind atPipelineCrossing } }', {
      id: res.body.data!['recordMeasurement'].ids[0],
    });
    expect(read.body.data!['measurement']).toEqual({ metalLossKind: 'GENERAL_CORROSION', atPipelineCrossing: true });
  });

  it.each([
    [{ dentDepthPctOd: 0 }, 'input.dentDepthPctOd', 'more than 0 and at most 50'],
    [{ dentDepthPctOd: 61 }, 'input.dentDepthPctOd', 'more than 0 and at most 50'],
    [{ featureType: 'METAL_LOSS', depthPctWt: 30, dentDepthPctOd: 3 }, 'input.dentDepthPctOd', 'only for a DENT anomaly'],
    [{ featureType: 'CRACK', dentHasCracking: true }, 'input.dentHasCracking', 'only for a DENT anomaly'],
    [{ metalLossKind: 'PITTING' }, 'input.metalLossKind', 'only for a METAL_LOSS anomaly'],
    [{ type: 'PATROL', source: 'FIELD', interactsWithGirthWeld: true }, 'input.interactsWithGirthWeld', 'only for an ILI_ANOMALY'],
  ])('refuses %j, naming the field', async (change, field, rule) => {
    const before = await countOf();
    const res = await single({ ...dent, idempotencyKey: `bad-detail-${field}-${JSON.stringify(change)}`, ...change });
    expect((res.body.errors?.[0] as Err).extensions?.['code']).toBe('BAD_USER_INPUT');
    expect(violationsOf(res).some((v) => v.field === field && v.message.includes(rule))).toBe(true);
    expect(await countOf()).toBe(before);
  });
});

describe("an imported ILI run's features, all observed at the run's date", () => {
  const RUN = 'run-tie-2026-05';
  const RUN_AT = '2026-05-01T00:00:00.000Z';
  const FEATURES = 1_200;
  /** The console's along-the-line query (ConsoleIliFeatures): one run, the plot's fields, the count on every page. */
  const runPage = (after: string | null) =>
    call(
      `query($id: ID!, $run: String!, $after: String) { asset(id: $id) { measurements(type: ILI_ANOMALY, runId: $run, first: 500, after: $after) {
         totalCount pageInfo { hasNextPage endCursor } edges { node { id runId observedAt odometerM clockDeg depthPctWt lengthMm featureType } } } } }`,
      { id: segmentId, run: RUN, after },
    );

  beforeAll(async () => {
    // As an import stores a run: every feature carries the run's date, so the pages break the tie by id alone.
    const res = await record(iliBatch(FEATURES, RUN).map((item) => ({ ...item, observedAt: RUN_AT })));
    expect(res.body.data!['recordMeasurements']).toMatchObject({ insertedCount: FEATURES });
  }, 60_000);

  it('pages the run by id within its one instant, every feature exactly once, with the fields asked for', async () => {
    const ids: string[] = [];
    let after: string | null = null;
    for (;;) {
      const res: Awaited<ReturnType<typeof call>> = await runPage(after);
      expect(res.body.errors).toBeUndefined();
      const page = res.body.data!['asset'].measurements;
      expect(page.totalCount).toBe(FEATURES);
      for (const { node } of page.edges) {
        expect(node).toMatchObject({ runId: RUN, observedAt: RUN_AT, featureType: 'METAL_LOSS' });
        expect(typeof node.odometerM).toBe('number');
        expect(typeof node.lengthMm).toBe('number');
        ids.push(node.id);
      }
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(ids).toHaveLength(FEATURES);
    expect(new Set(ids).size).toBe(FEATURES);
    expect([...ids].sort().reverse()).toEqual(ids); // newest first, the tie by the highest id first
  }, 60_000);

  it('reads a page inside the tie from the run index at its cursor, counts the run from the index, and reads only the fields selected', async () => {
    const first = await runPage(null);
    const mongo = stack.subgraphs.measurements.mongo!;
    const commands = await mongoCommandsDuring(mongo, () => runPage(first.body.data!['asset'].measurements.pageInfo.endCursor));
    const collection = (name: string) => mongo.db(commands[0]!.databaseName).collection(name);
    const finds = commands.filter((c) => c.commandName === 'find' && c.command['find'] === 'measurements');
    // Inside the tie one read serves the whole page: the rest of the cursor's instant, below its id.
    expect(finds).toHaveLength(1);
    const find = finds[0]!;
    const plan = JSON.stringify(
      await collection('measurements').find(find.command['filter']).sort(find.command['sort']).limit(find.command['limit']).explain('queryPlanner'),
    );
    expect(plan).toContain('tenant_asset_type_run_time');
    expect(plan).not.toContain('COLLSCAN');
    expect(plan).not.toContain('"SORT"');
    // Bounded at the cursor's id within the instant: the embedded planner says so, MongoDB shows the _id bounds.
    expect(plan).toMatch(/"linepackRange":true|"_id":\["\(/);
    // Only what the page's nodes read (and the cursor's keys) travels: not the whole feature.
    expect(Object.keys(find.command['projection'] as object).sort()).toEqual(
      ['_id', 'clockDeg', 'depthPctWt', 'featureType', 'lengthMm', 'observedAt', 'odometerM', 'runId'].sort(),
    );
    // totalCount, asked with every page: counted from the index, not by reading the run's features.
    const count = commands.find((c) => c.commandName === 'aggregate' && c.command['aggregate'] === 'measurements')!;
    expect(count).toBeDefined();
    const countPlan = JSON.stringify(
      await mongo
        .db(count.databaseName)
        .command({ explain: { aggregate: 'measurements', pipeline: count.command['pipeline'], cursor: {} }, verbosity: 'queryPlanner' }),
    );
    expect(countPlan).toMatch(/COUNT_SCAN|"stage":"COUNT"/);
    expect(countPlan).toContain('tenant_asset_type_run_time');
  });
});
