/**
 * A small keep-alive HTTP load generator on `node:http`: a fixed number of connections, each
 * sending its requests back to back, for a bounded time and a bounded count. It runs in a child
 * process (`http-load-child.ts`) so that the server under test keeps its own event loop.
 */
import http from 'node:http';
import { percentile } from './measure.js';

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

/** What a load run measured. Latencies are from request start to the last byte of the response. */
export interface LoadResult {
  readonly requests: number;
  /** Responses with a status other than the expected 2xx, and transport errors. */
  readonly failures: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The first failure seen, to explain a non-zero count. */
  readonly firstFailure?: string;
}

/** Runs the load and returns its figures. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const target = new URL(options.url);
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  let started = 0;
  const start = performance.now();
  const deadline = start + options.durationMs;
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const headers = {
    ...options.headers,
    ...(body === undefined ? {} : { 'content-length': String(body.length) }),
  };

  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const request = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          method: options.method,
          headers,
        },
        (response) => {
          response.on('data', () => {});
          response.on('end', () => {
            latencies.push(performance.now() - t0);
            const status = response.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              failures += 1;
              firstFailure ??= `HTTP ${status}`;
            }
            resolve();
          });
        },
      );
      request.on('error', (error) => {
        failures += 1;
        firstFailure ??= error.message;
        resolve();
      });
      request.end(body);
    });

  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < deadline && started < options.maxRequests) {
        started += 1;
        await one();
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    failures,
    seconds,
    requestsPerSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    ...(firstFailure === undefined ? {} : { firstFailure }),
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
