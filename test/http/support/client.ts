import { type IncomingHttpHeaders, request } from 'node:http';

/** What one request to the test server sent back. */
export interface HttpReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON (throws when it is not JSON, which fails the test). */
  json<T = unknown>(): T;
}

/** One raw request: any method, headers (including `Host`) and body. */
export interface RawRequest {
  readonly method?: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
}

/**
 * Sends a request over real HTTP with `node:http`, which, unlike fetch (undici), lets a test set
 * `Host` so that the server sees `acme.localhost` while the socket goes to 127.0.0.1. Headers are
 * sent as given (no Content-Type or User-Agent is added); only a missing Content-Length of a body is set.
 */
export function sendRaw(port: number, raw: RawRequest): Promise<HttpReply> {
  const headers: Record<string, string> = { ...raw.headers };
  const names = Object.keys(headers).map((name) => name.toLowerCase());
  // Node frames a body with Content-Length or chunks only for some methods by default (not DELETE);
  // real clients always frame it, so a body without either header gets its length here.
  if (raw.body !== undefined && !names.includes('content-length') && !names.includes('transfer-encoding')) {
    headers['content-length'] = String(Buffer.byteLength(raw.body));
  }
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: raw.method ?? 'GET', path: raw.path, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: <T>() => JSON.parse(text) as T });
        });
      },
    );
    req.on('error', reject);
    if (raw.body !== undefined) req.write(raw.body);
    req.end();
  });
}

/** An `Authorization` header value for HTTP Basic: the API key as user, `X` as the password by default. */
export function basic(user: string, password = 'X'): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
