/**
 * The HTTP load generator: autocannon (as issue 11 asks), with a fixed number of keep-alive
 * connections, one request in flight each, for a bounded time and a bounded count. It runs in a
 * child process (`http-load-child.ts`) so that the server under test keeps its own event loop.
 */
import http from 'node:http';
import autocannon from 'autocannon';

/** What to send, how hard, and for how long. */
export interface LoadOptions {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Concurrent keep-alive connections, each with one request in flight. */
  readonly connections: number;
  readonly durationMs: number;
  /** Stop after this many requests even if time is left. */
  readonly maxRequests: number;
}

/** What a load run measured (autocannon's figures). Latencies are per request, in ms. */
export interface LoadResult {
  readonly requests: number;
  /** Responses with a status other than 2xx, transport errors and timeouts. */
  readonly failures: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** What the failures were, to explain a non-zero count. */
  readonly firstFailure?: string;
}

/** Runs the load with autocannon and returns its figures. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method,
    headers: { ...options.headers },
    ...(options.body === undefined ? {} : { body: options.body }),
    connections: options.connections,
    pipelining: 1,
    duration: Math.max(1, options.durationMs / 1000),
    maxOverallRequests: options.maxRequests,
  });
  const requests = result.requests.total;
  const failures = result.non2xx + result.errors + result.timeouts;
  const seconds = result.duration;
  const statuses = Object.entries(result.statusCodeStats ?? {})
    .filter(([status]) => !status.startsWith('2'))
    .map(([status, stat]) => `HTTP ${status} x${(stat as { count: number }).count}`);
  return {
    requests,
    failures,
    seconds,
    requestsPerSecond: requests / seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    ...(failures === 0
      ? {}
      : { firstFailure: [...statuses, ...(result.errors > 0 ? [`${result.errors} errors`] : [])].join(', ') }),
  };
}

/** A whole response: status, content type and body bytes. */
export interface CapturedResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: Uint8Array;
}

/**
 * Sends one request with `node:http` and reads the whole response. (`fetch` cannot be used here:
 * it refuses to set `Host`, which is how the HTTP binding finds the site.)
 */
export function requestOnce(
  url: string,
  method: 'GET' | 'POST',
  headers: Readonly<Record<string, string>>,
  body?: string,
): Promise<CapturedResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method, headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: response.headers['content-type'] ?? 'application/json',
            body: new Uint8Array(Buffer.concat(chunks)),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
