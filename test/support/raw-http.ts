import net from 'node:net';

export interface RawResponse {
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  body: string;
}

/** How the server ended a connection: a clean close (FIN), or an error such as ECONNRESET. */
export type ConnectionEnd = { how: 'closed' } | { how: 'error'; code: string };

/**
 * One HTTP/1.1 connection, byte by byte: what a keep-alive client (an SDK's pool, a proxy) does, without a client
 * library that would retry, pool or hide a reset. Requests go one at a time; each resolves with the complete answer
 * (Content-Length or chunked), or rejects if the connection ends before it is complete. `ended` says how the server
 * ended the connection.
 */
export class RawConnection {
  private received = Buffer.alloc(0);
  private pending: { resolve(r: RawResponse): void; reject(e: Error): void } | null = null;
  private end: ConnectionEnd | null = null;
  readonly ended: Promise<ConnectionEnd>;

  private constructor(private readonly socket: net.Socket) {
    let error: string | null = null;
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.tryComplete();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    this.ended = new Promise((resolve) =>
      socket.once('close', () => {
        this.end = error ? { how: 'error', code: error } : { how: 'closed' };
        this.tryComplete();
        this.pending?.reject(new Error(`connection ${error ? `error ${error}` : 'closed'} before a complete answer`));
        this.pending = null;
        resolve(this.end);
      }),
    );
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  /** Whether the connection is still open (the server has not ended it). */
  get open(): boolean {
    return this.end === null;
  }

  /** Sends one request (keep-alive, as HTTP/1.1 is by default) and resolves with its complete answer. */
  request(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
    if (this.pending) throw new Error('one request at a time on a RawConnection');
    const bytes = body === undefined ? '' : body;
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(bytes)}`);
    const answer = new Promise<RawResponse>((resolve, reject) => (this.pending = { resolve, reject }));
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n${bytes}`);
    return answer;
  }

  /** A GraphQL POST to /graphql. */
  graphql(query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<RawResponse> {
    return this.request('POST', '/graphql', { 'Content-Type': 'application/json', ...headers }, JSON.stringify({ query, variables }));
  }

  close(): void {
    this.socket.destroy();
  }

  private tryComplete(): void {
    if (!this.pending) return;
    const parsed = parse(this.received, this.end !== null);
    if (!parsed) return;
    this.received = this.received.subarray(parsed.consumed);
    const { resolve } = this.pending;
    this.pending = null;
    resolve(parsed.response);
  }
}

/** One complete response at the start of `data`, or null while incomplete. */
function parse(data: Buffer, atEof: boolean): { response: RawResponse; consumed: number } | null {
  const headerEnd = data.indexOf('\r\n\r\n');
  if (headerEnd < 0) return null;
  const [statusLine, ...headerLines] = data.subarray(0, headerEnd).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  let at = headerEnd + 4;
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const chunks: Buffer[] = [];
    for (;;) {
      const lineEnd = data.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
      if (data.length < lineEnd + 2 + size + 2) return null;
      if (size === 0) return { response: { status, headers, body: Buffer.concat(chunks).toString('utf8') }, consumed: lineEnd + 4 };
      chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = headers['content-length'] !== undefined ? Number(headers['content-length']) : null;
  if (length === null) return atEof ? { response: { status, headers, body: data.subarray(at).toString('utf8') }, consumed: data.length } : null;
  if (data.length < at + length) return null;
  return { response: { status, headers, body: data.subarray(at, at + length).toString('utf8') }, consumed: at + length };
}
