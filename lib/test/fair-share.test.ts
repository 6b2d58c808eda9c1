/**
 * FairShare: heavy work of one tenant waits behind its own, never in front of another tenant's (issue 31, item 1).
 * Pieces are held open by the test and released one at a time, so the order is observed, not timed.
 */
import { FairShare } from '../fair-share';

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
