/**
 * Loopback webhook receivers for tests: real HTTP servers on 127.0.0.1 (port 0, never any other
 * address) that keep every request and answer through a reply function.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got, and what it answered. */
export interface Hit {
  readonly body: string;
  readonly headers: IncomingHttpHeaders;
  readonly path: string;
  readonly id: string | undefined;
  status?: number;
}

export type Reply = (hit: Hit, res: ServerResponse, req: IncomingMessage) => void;

/** Answers with `status` (and an optional reason phrase) and notes it on the hit. */
export function answer(res: ServerResponse, hit: Hit, status: number, reason?: string): void {
  hit.status = status;
  if (reason !== undefined) res.statusMessage = reason;
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(status === 200 ? 'ok' : 'no');
}

export const ok: Reply = (hit, res) => answer(res, hit, 200);

export class Receiver {
  readonly hits: Hit[] = [];
  reply: Reply;
  #server: Server | undefined;
  #port = 0;

  constructor(reply: Reply) {
    this.reply = reply;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const id = /^id=(\d+)&/.exec(body)?.[1];
        const hit: Hit = { body, headers: req.headers, path: req.url ?? '', id };
        this.hits.push(hit);
        this.reply(hit, res, req);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
    return this;
  }

  /** Stops listening and drops every connection: the receiver is down (connection refused). */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Hits answered 200, by webhook id. */
  accepted(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const hit of this.hits) if (hit.status === 200 && hit.id) counts.set(hit.id, (counts.get(hit.id) ?? 0) + 1);
    return counts;
  }
}
