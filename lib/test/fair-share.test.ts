/**
 * FairShare: heavy work of one tenant waits behind its own, never in front of another tenant's (issue 31, item 1).
 * Pieces are held open by the test and released one at a time, so the order is observed, not timed.
 */
import { databaseReadLimits, databaseReads, FairShare, MAX_REST_MS, restAfter } from '../fair-share';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

test("another tenant's first piece runs after the piece in progress, not after the first tenant's backlog", async () => {
  const share = new FairShare(1);
  const order: string[] = [];
  const gates = new Map<string, ReturnType<typeof gate>>();
  const piece = (tenant: string, n: number) => {
    const g = gate();
    gates.set(`${tenant}${n}`, g);
    return share.run(tenant, async () => {
      order.push(`${tenant}${n}`);
      await g.opened;
    });
  };
  const all = [piece('A', 1), piece('A', 2), piece('A', 3), piece('A', 4)];
  await Promise.resolve();
  all.push(piece('B', 1), piece('B', 2));
  expect(share.queued).toBe(5);
  for (const name of ['A1', 'B1', 'A2', 'B2', 'A3', 'A4']) {
    await new Promise((r) => setImmediate(r));
    expect(order.at(-1)).toBe(name);
    gates.get(name)!.open();
  }
  await Promise.all(all);
  expect(order).toEqual(['A1', 'B1', 'A2', 'B2', 'A3', 'A4']);
});

test("with restRatio, a tenant rests after a piece as long as it took, while another tenant's pieces run", async () => {
  const share = new FairShare(1, 1_000, { restRatio: 1 });
  const spans = new Map<string, { from: number; to: number }>();
  const piece = (name: string, ms: number) =>
    share.run(name[0]!, async () => {
      const from = performance.now();
      await new Promise((resolve) => setTimeout(resolve, ms));
      spans.set(name, { from, to: performance.now() });
    });
  const all = [piece('A1', 400), piece('A2', 1)];
  await Promise.resolve();
  all.push(piece('B1', 1), piece('B2', 1), piece('B3', 1));
  await Promise.all(all);
  const order = [...spans.entries()].sort(([, x], [, y]) => x.from - y.from).map(([name]) => name);
  // Without the rest A2 would come right after B1 (round-robin); resting, A lets B's three short pieces through first.
  expect(order).toEqual(['A1', 'B1', 'B2', 'B3', 'A2']);
  const a1 = spans.get('A1')!;
  // The rest is measured from the slot's hand-out to its return, which spans the piece (a timer may fire a millisecond early).
  expect(spans.get('A2')!.from - a1.to).toBeGreaterThanOrEqual(a1.to - a1.from - 2);
  expect(share.queued).toBe(0);
});

test('a thread may change its rest (the measurements job runner rests three times as long): the next piece rests by the new ratio, for its tenant only', async () => {
  const share = new FairShare(1, 1_000, { restRatio: 1 });
  share.restRatio = 3;
  let pieceStarted = 0;
  let pieceEnded = 0;
  await share.run('A', async () => {
    pieceStarted = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 100));
    pieceEnded = Date.now();
  });
  // The rest runs from the piece's release, after pieceEnded: what is left of it plus the time since pieceEnded is at
  // least three times the piece (3 ms for the clock's whole milliseconds), however late this line runs on a busy
  // machine; resting once as long would leave about one piece.
  expect(share.restingFor('A') + (Date.now() - pieceEnded)).toBeGreaterThanOrEqual(Math.min(3 * (pieceEnded - pieceStarted), MAX_REST_MS) - 3);
  expect(share.restingFor('B')).toBe(0);
});

test('a rest is whole milliseconds, none below one, and at most MAX_REST_MS however long the piece held its slot', () => {
  expect([restAfter(0.4, 1), restAfter(37.42, 1), restAfter(10, 2), restAfter(60_000, 1), restAfter(500, 0)]).toEqual([0, 38, 20, MAX_REST_MS, 0]);
});

test('never more pieces at once than slots, and a failed piece frees its slot', async () => {
  const share = new FairShare(2);
  let running = 0;
  let most = 0;
  const results = await Promise.allSettled(
    Array.from({ length: 12 }, (_, i) =>
      share.run(i % 3 === 0 ? 'A' : 'B', async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setImmediate(r));
        running--;
        if (i === 4) throw new Error('piece 4 failed');
      }),
    ),
  );
  expect(most).toBe(2);
  expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
  expect(share.queued).toBe(0);
});

test('a tenant over its queue cap is refused with RATE_LIMITED and Retry-After; others still queue', async () => {
  const share = new FairShare(1, 2);
  const hold = gate();
  const first = share.run('A', () => hold.opened);
  const queued = [share.run('A', async () => undefined), share.run('A', async () => undefined)];
  await expect(share.run('A', async () => undefined)).rejects.toMatchObject({
    extensions: { code: 'RATE_LIMITED', http: { status: 429, headers: new Map([['retry-after', '1']]) } },
  });
  const other = share.run('B', async () => 'B ran');
  hold.open();
  await expect(other).resolves.toBe('B ran');
  await Promise.all([first, ...queued]);
});

test("with a per-tenant cap, one tenant's pieces leave the other slots free for other tenants", async () => {
  const share = new FairShare(3, 10, { maxRunningPerTenant: 1 });
  const holds = [gate(), gate(), gate()];
  const started: string[] = [];
  const a = holds.map((hold, n) =>
    share.run('A', async () => {
      started.push(`A${n + 1}`);
      await hold.opened;
    }),
  );
  const b = share.run('B', async () => void started.push('B1'));
  await b;
  // B ran while A's first piece held one slot and two slots stood free: A may use one only.
  expect(started).toEqual(['A1', 'B1']);
  expect(share.runningFor('A')).toBe(1);
  expect(share.queued).toBe(2);
  holds[0]!.open();
  await new Promise((r) => setImmediate(r));
  expect(started).toEqual(['A1', 'B1', 'A2']);
  holds[1]!.open();
  holds[2]!.open();
  await Promise.all(a);
  expect(share.runningFor('A')).toBe(0);
});

test('a piece whose request ends while it waits leaves the queue, rejects with the reason and never runs', async () => {
  const share = new FairShare(1, 2);
  const hold = gate();
  const first = share.run('A', () => hold.opened);
  const abort = new AbortController();
  let ran = false;
  const waiting = share.run(
    'A',
    async () => {
      ran = true;
    },
    abort.signal,
  );
  expect(share.queued).toBe(1);
  abort.abort(new Error('deadline passed'));
  await expect(waiting).rejects.toThrow('deadline passed');
  expect(share.queued).toBe(0);
  // Its place is free again: the tenant can queue two more.
  expect(share.hasRoomFor('A')).toBe(true);
  const next = share.run('A', async () => 'next ran');
  hold.open();
  await expect(next).resolves.toBe('next ran');
  await first;
  expect(ran).toBe(false);
});

test('acquire hands back a release that frees the slot once, however often it is called', async () => {
  const share = new FairShare(1);
  const release = await share.acquire('A');
  const other = share.run('B', async () => 'B ran');
  release();
  release();
  await expect(other).resolves.toBe('B ran');
  expect(share.runningFor('A')).toBe(0);
  expect(share.runningFor('B')).toBe(0);
});

test('a piece whose deadline passes while it waits is refused with TIMEOUT when its turn comes, never runs, and leaves the slot to the next', async () => {
  const share = new FairShare(1);
  const hold = gate();
  const first = share.run('A', () => hold.opened);
  let ran = false;
  const late = share.run(
    'B',
    async () => {
      ran = true;
    },
    { deadline: Date.now() + 20 },
  );
  const next = share.run('C', async () => 'C ran');
  // Until the slot is free nobody looks at the deadline: no timer is kept per waiting piece.
  await new Promise((r) => setTimeout(r, 50));
  expect(share.queued).toBe(2);
  hold.open();
  await expect(late).rejects.toMatchObject({ extensions: { code: 'TIMEOUT' } });
  await expect(next).resolves.toBe('C ran');
  await first;
  expect(ran).toBe(false);
  // A piece already past its deadline is refused at once, without queueing.
  await expect(share.run('B', async () => 'ran', { deadline: Date.now() - 1 })).rejects.toMatchObject({ extensions: { code: 'TIMEOUT' } });
  expect(share.queued).toBe(0);
});

test("the database reads of one tenant's fan-out run a few at a time, and another tenant's read starts at once", async () => {
  const { perTenant } = databaseReadLimits;
  const holds = Array.from({ length: perTenant * 5 }, () => gate());
  const fanOut = holds.map((hold) => databaseReads.run('fan-out tenant', () => hold.opened));
  expect(databaseReads.runningFor('fan-out tenant')).toBe(perTenant);
  expect(databaseReads.queuedFor('fan-out tenant')).toBe(perTenant * 4);
  await expect(databaseReads.run('another tenant', async () => 'read')).resolves.toBe('read');
  for (const hold of holds) hold.open();
  await Promise.all(fanOut);
  expect(databaseReads.runningFor('fan-out tenant')).toBe(0);
  expect(databaseReads.queued).toBe(0);
});
