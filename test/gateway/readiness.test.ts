import { startTestStack, type TestStack } from '../support/stack';

/** The gateway's /readyz reflects the services it needs, so an orchestrator takes a gateway that cannot serve out of rotation. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

const readyz = async () => {
  const res = await fetch(`${stack.gatewayOrigin}/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; dependencies: Record<string, string> } };
};

it('is ready when auth and every subgraph are; degraded naming a subgraph that is down; unavailable without auth', async () => {
  const ready = await readyz();
  expect(ready.status).toBe(200);
  expect(ready.body.status).toBe('ready');
  expect(Object.keys(ready.body.dependencies).sort()).toEqual(['analytics', 'assets', 'auth', 'compliance', 'measurements']);
  expect(Object.values(ready.body.dependencies).every((s) => s === 'ready')).toBe(true);

  // One subgraph down is the same for every replica: they stay in the load balancer and say what is missing.
  await stack.subgraphs.measurements.stop();
  await new Promise((r) => setTimeout(r, 2_100)); // past the 2 s the answer is reused
  const partial = await readyz();
  expect(partial.status).toBe(200);
  expect(partial.body.status).toBe('degraded');
  expect(partial.body.dependencies['measurements']).toMatch(/unreachable/);
  expect(partial.body.dependencies['assets']).toBe('ready');

  // Without the auth service no credential can be verified: out of the load balancer.
  await stack.subgraphs.auth.stop();
  await new Promise((r) => setTimeout(r, 2_100));
  const down = await readyz();
  expect(down.status).toBe(503);
  expect(down.body.status).toBe('unavailable');
  expect(down.body.dependencies['auth']).toMatch(/unreachable/);
  // Liveness is another question: the process is fine.
  expect((await fetch(`${stack.gatewayOrigin}/healthz`)).status).toBe(200);
}, 20_000);
