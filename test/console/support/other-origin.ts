import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A page on another origin (another port of 127.0.0.1: same site, different origin), as a third-party tool or
 * an attacker's page would be. Its script exposes `probe(url, init)`, which fetches and says whether the page
 * could read the answer.
 */
const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Another origin</title></head>
<body><h1>Another origin</h1><pre id="out"></pre>
<script>
window.probe = async (url, init) => {
  try {
    const res = await fetch(url, init);
    const out = { read: true, status: res.status, body: await res.text() };
    document.getElementById('out').textContent = JSON.stringify(out);
    return out;
  } catch (err) {
    const out = { read: false, error: String(err) };
    document.getElementById('out').textContent = JSON.stringify(out);
    return out;
  }
};
</script></body></html>`;

export interface OtherOrigin {
  origin: string;
  close(): Promise<void>;
}

export async function startOtherOrigin(): Promise<OtherOrigin> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface ProbeResult {
  read: boolean;
  status?: number;
  body?: string;
  error?: string;
}

/** A raw HTTP request with any headers (Origin included), outside the browser. */
export function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
