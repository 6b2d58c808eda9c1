import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestStack, type TestStack } from '../support/stack';

/**
 * The gateway does not check `Host` (it is an API behind a proxy or load balancer that routes by host), so nothing may
 * depend on it: no URL, cookie or upstream is derived from what the client says its host is. In particular the /auth
 * proxy forwards to the configured auth service only — an absolute-form request target (`GET http://other/auth/…`)
 * once made it fetch that other host, carrying an identity token minted for the auth service.
 */
let stack: TestStack;
let trap: http.Server;
let trapPort: number;
const trapped: string[] = [];
const password = 'a long enough password';

beforeAll(async () => {
  stack = await startTestStack();
  const { tenantId } = await stack.tenantWithKey();
  await stack.authStore.createUser({ tenantId, email: 'host@example.com', password, role: 'VIEWER' });
  trap = http.createServer((req, res) => {
    trapped.push(`${req.method} ${req.url} ${Object.keys(req.headers).join(',')}`);
    res.setHeader('content-type', 'application/json');
    res.end('{"keys":[],"trapped":true}');
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  trapPort = (trap.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => trap?.close(resolve));
  await stack?.stop();
});

/** One request written by hand: the request line and headers exactly as given. */
function raw(lines: string[], body = ''): Promise<{ status: number; head: string; body: string }> {
  const { port } = new URL(stack.gatewayOrigin);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => {
      socket.write(`${lines.join('\r\n')}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', rest = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(head.split(' ')[1]), head, body: rest });
    });
  });
}

it('forwards an absolute-form /auth request to its own auth service, never to the host the target names', async () => {
  const jwks = await raw([`GET http://127.0.0.1:${trapPort}/auth/.well-known/jwks.json HTTP/1.1`, `Host: 127.0.0.1:${trapPort}`]);
  const login = await raw(
    [`POST http://127.0.0.1:${trapPort}/auth/login HTTP/1.1`, `Host: 127.0.0.1:${trapPort}`, 'Content-Type: application/json'],
    JSON.stringify({ email: 'host@example.com', password }),
  );
  expect(trapped).toEqual([]);
  expect(jwks.status).toBe(200);
  expect(jwks.body).not.toContain('trapped');
  expect(login.status).toBe(200);
  expect(login.body).toContain('access_token');
});

it('answers the same whatever Host says, and sets host-only cookies (no Domain taken from it)', async () => {
  const login = await raw(
    ['POST /auth/login HTTP/1.1', 'Host: evil.example', 'Content-Type: application/json', 'Sec-Fetch-Site: same-origin'],
    JSON.stringify({ email: 'host@example.com', password, session: 'cookie' }),
  );
  expect(login.status).toBe(200);
  const cookies = login.head.split('\r\n').filter((line) => /^set-cookie:/i.test(line));
  expect(cookies.length).toBe(2);
  for (const cookie of cookies) expect(cookie).not.toMatch(/domain=/i);
  expect(login.body).not.toContain('evil.example');
});
