/**
 * The payment gateway of the crash tests lives in the test process, outside the billing process
 * that is killed: a real gateway keeps the money it took when the merchant's process dies. The
 * test serves a {@link TestGateway} over loopback HTTP; the child billing process reaches it
 * through {@link createRemoteGateway}. A hook on each charge lets the test kill the child while
 * its charge is in flight: before the gateway sees it, or after the gateway took the money but
 * before the answer reaches the child.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChargeRequest, ChargeResult, PaymentGateway, TestGateway } from 'billing-engine';

/** What the test decides for one charge as it arrives. */
export type ChargeFate = 'answer' | 'kill-before-charge' | 'kill-after-charge';

/** The test's side of the remote gateway. */
export interface GatewayServer {
  readonly url: string;
  /** Charge calls received, including repeats of a key after a restart. */
  readonly chargeCalls: number;
  close(): Promise<void>;
}

/**
 * Serves `gateway` on a loopback port. `onCharge` decides each charge's fate; for a kill it gets
 * `kill()` to call, and the request is then left unanswered (the child is gone).
 */
export async function serveGateway(
  gateway: TestGateway,
  onCharge: (request: ChargeRequest) => { fate: ChargeFate; kill?: () => Promise<void> },
): Promise<GatewayServer> {
  let chargeCalls = 0;
  const handle = async (path: string, body: unknown, res: ServerResponse) => {
    if (path === '/charge') {
      chargeCalls += 1;
      const request = body as ChargeRequest;
      const { fate, kill } = onCharge(request);
      if (fate === 'kill-before-charge') {
        await kill?.();
        res.destroy();
        return;
      }
      const result = await gateway.charge(request);
      if (fate === 'kill-after-charge') {
        await kill?.();
        res.destroy();
        return;
      }
      return send(res, result);
    }
    if (path === '/lookup') return send(res, { result: (await gateway.lookup((body as { key: string }).key)) ?? null });
    if (path === '/refund') return send(res, await gateway.refund(body as Parameters<TestGateway['refund']>[0]));
    if (path === '/tokenize') return send(res, await gateway.tokenize(body as Parameters<TestGateway['tokenize']>[0]));
    res.writeHead(404).end();
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      raw += chunk;
    });
    req.on('end', () => {
      handle(req.url ?? '/', JSON.parse(raw || '{}'), res).catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get chargeCalls() {
      return chargeCalls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

/** The billing process's side: a {@link PaymentGateway} that forwards every call to `url`. */
export function createRemoteGateway(url: string, name = 'bogus'): PaymentGateway {
  const call = async <T>(path: string, body: unknown): Promise<T> => {
    const request = () =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    // A pooled loopback socket that the server closed as idle fails the request before it is
    // sent; with many charges in flight that happens, and the engine would rightly leave the
    // charge unknown for an hour, past the test's last incarnation. Every call here is keyed (or
    // a read), so one resend, as a real gateway client makes, cannot take money twice.
    const response = await request().catch((error: unknown) => {
      process.stderr.write(`remote gateway ${path}: ${String(error)}; sending once more\n`);
      return request();
    });
    if (!response.ok) throw new Error(`gateway ${path} answered ${response.status}`);
    return (await response.json()) as T;
  };
  return {
    name,
    supportsRefunds: true,
    tokenize: (card) => call('/tokenize', card),
    charge: (request) => call<ChargeResult>('/charge', request),
    refund: (request) => call('/refund', request),
    lookup: async (key) => (await call<{ result: ChargeResult | null }>('/lookup', { key })).result ?? undefined,
  };
}
