import http from 'node:http';

export interface PlainResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/**
 * An HTTP request that leaves from another loopback address (127.0.0.2, 127.0.0.3, …: Linux routes all of
 * 127/8 to lo), so one test can be several clients — an attacker and a user behind different addresses —
 * as the gateway sees them (req.ip).
 */
export function requestFrom(
  localAddress: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<PlainResponse> {
  const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: init.method ?? (payload ? 'POST' : 'GET'),
        localAddress,
        agent: false,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...init.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Record<string, unknown> = {};
          try {
            body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
          } catch {
            body = { text };
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** `{ __typename }` through the gateway from `localAddress` with `token` as the bearer. */
export const typenameFrom = (localAddress: string, gatewayUrl: string, token: string) =>
  requestFrom(localAddress, gatewayUrl, { body: { query: '{ __typename }' }, headers: { authorization: `Bearer ${token}` } });
