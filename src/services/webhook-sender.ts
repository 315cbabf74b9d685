import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage, type RequestOptions, STATUS_CODES } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { checkDestination, type ResolvedAddress } from '../domain/webhooks/index.js';

/** One HTTP POST of a webhook: where, what and with which headers. */
export interface WebhookRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Resolves a hostname to every address it has, as `dns.lookup(host, { all: true })` does. The
 * sender calls it once per send, judges every address, and connects to the one it judged.
 */
export type WebhookResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The default resolver: the system's (`getaddrinfo`, so `/etc/hosts` too), every address in its own order. */
export const systemResolver: WebhookResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Limits of one send. */
export interface WebhookSendOptions {
  /**
   * Replaces the built-in transport (tests; see `WebhookServiceOptions.fetch`). The sender then
   * neither resolves nor connects, so `resolve` and `allowLoopback` are not used.
   */
  readonly fetch?: typeof fetch;
  /** Resolves the URL's hostname; a literal IP in the URL is judged as it is, without a lookup. */
  readonly resolve: WebhookResolver;
  /** Loopback addresses may be connected to (the `allowLocalReceivers` option on a test-mode site). */
  readonly allowLoopback: boolean;
  /** The whole exchange (lookup, connect, headers, reading the response) is abandoned after this long. */
  readonly timeoutMs: number;
  /** At most this much of a response body is read; the rest is discarded by closing the connection. */
  readonly maxResponseBytes: number;
}

/** What came of one send: accepted (HTTP 200) or not, with the error text for `last_error`. */
export type WebhookSendResult =
  | { readonly accepted: true; readonly status: 200 }
  | { readonly accepted: false; readonly status: number | null; readonly error: string };

/** The answer's status line, once its headers arrived. */
interface Answer {
  readonly status: number;
  readonly reason: string;
}

/** The receiver's reason phrase is its own text: keep it short and printable before it lands in a record. */
function reasonPhrase(status: number, given: string): string {
  const text = given
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(0, 100);
  return text || STATUS_CODES[status] || 'Unknown Status';
}

/** Rejects when `signal` aborts, so even work that ignores its signal cannot hold the worker past the deadline. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function networkError(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  if (typeof code === 'string') return `Connection failed: ${code}`;
  const message = cause instanceof Error ? cause.message : String(cause);
  return `Connection failed: ${message.replace(/[^\x20-\x7e]/g, '').slice(0, 200)}`;
}

// ---------------------------------------------------------------------------------------------
// The built-in transport: node:http / node:https, connected to the address that was checked.

/**
 * A `lookup` for `net.connect` that answers the already-checked address and nothing else, so the
 * socket connects where the rule said it may, and no second lookup (whose answer could differ: DNS
 * rebinding) ever happens. Node asks with `all: true` when it may try several families.
 */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    // Answer asynchronously, as dns.lookup does: the request attaches its socket listeners on a
    // later tick, and an error raised before that would have no listener.
    setImmediate(() => {
      if (options.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    });
  };
}

/**
 * POSTs over a fresh connection to `address` (never a pooled one: a socket kept from an earlier
 * send may lead to an address judged under other rules). The URL's hostname stays the request's
 * name, so the `Host` header, TLS SNI and certificate check use it exactly as without pinning.
 * Resolves once the status line and headers arrived.
 */
function postPinned(
  target: URL,
  request: WebhookRequest,
  address: string,
  family: 4 | 6,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const hostname = target.hostname.replace(/^\[(.*)\]$/, '$1');
  const options: RequestOptions = {
    method: 'POST',
    hostname,
    ...(target.port === '' ? {} : { port: Number(target.port) }),
    path: `${target.pathname}${target.search}`,
    family,
    headers: { ...request.headers, 'Content-Length': String(Buffer.byteLength(request.body)) },
    lookup: pinnedLookup(address, family),
    agent: false,
    signal,
  };
  return new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = send(options, resolve);
    // Kept for the request's whole life: an abort after the answer arrived still emits here.
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/**
 * Reads at most `limit` bytes of the body, then closes the connection. A small answer is read to
 * its end; a huge or endless one is cut off after the first few KB, so a receiver can never make
 * the worker buffer or wait for its whole body.
 */
function drainMessage(response: IncomingMessage, limit: number, signal: AbortSignal): Promise<void> {
  const reading = new Promise<void>((resolve) => {
    let read = 0;
    const done = () => {
      response.off('data', onData);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.byteLength;
      if (read >= limit) done();
    };
    response.on('data', onData);
    response.once('end', done);
    response.on('error', done);
    response.once('close', done);
  });
  return untilAborted(reading, signal).finally(() => {
    if (!response.complete) response.destroy();
  });
}

async function sendPinned(
  request: WebhookRequest,
  options: WebhookSendOptions,
  signal: AbortSignal,
): Promise<Answer | { readonly refused: string }> {
  const target = new URL(request.url);
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(host);
  const resolved: readonly ResolvedAddress[] =
    literal === 0
      ? await untilAborted(
          Promise.resolve().then(() => options.resolve(host)),
          signal,
        )
      : [{ address: host, family: literal }];
  const decision = checkDestination(target.hostname, normalise(resolved), { allowLoopback: options.allowLoopback });
  if (!decision.allowed) return { refused: decision.reason };
  const response = await untilAborted(postPinned(target, request, decision.address, decision.family, signal), signal);
  const status = response.statusCode ?? 0;
  // The status is decided by now; the body is read only to finish the exchange, and its errors
  // (an endless body cut off by the deadline) do not change the outcome.
  await drainMessage(response, options.maxResponseBytes, signal).catch(() => undefined);
  return { status, reason: reasonPhrase(status, response.statusMessage ?? '') };
}

/** A resolver's answer is not ours either: anything but a list of `{ address }` becomes entries no rule allows. */
function normalise(resolved: unknown): ResolvedAddress[] {
  if (!Array.isArray(resolved)) return [];
  return resolved.map((entry: unknown) => {
    const address = typeof entry === 'object' && entry !== null ? (entry as { address?: unknown }).address : undefined;
    const family = typeof entry === 'object' && entry !== null ? (entry as { family?: unknown }).family : undefined;
    return { address: typeof address === 'string' ? address : String(address), family: Number(family) };
  });
}

// ---------------------------------------------------------------------------------------------
// An injected fetch.

async function sendFetch(
  request: WebhookRequest,
  fetcher: typeof fetch,
  maxResponseBytes: number,
  signal: AbortSignal,
): Promise<Answer> {
  const response = await untilAborted(
    fetcher(request.url, { method: 'POST', body: request.body, headers: request.headers, redirect: 'manual', signal }),
    signal,
  );
  await drainResponse(response, maxResponseBytes, signal).catch(() => undefined);
  return { status: response.status, reason: reasonPhrase(response.status, response.statusText) };
}

/** {@link drainMessage} for a fetch `Response`. */
async function drainResponse(response: Response, limit: number, signal: AbortSignal): Promise<void> {
  const body = response.body;
  if (body === null) return;
  const reader = body.getReader();
  let read = 0;
  try {
    while (read < limit) {
      const chunk = await untilAborted(reader.read(), signal);
      if (chunk.done) return;
      read += chunk.value.byteLength;
    }
  } finally {
    // Cancelling an unfinished stream closes the connection; ignore errors of an already-closed one.
    reader.cancel().catch(() => undefined);
  }
}

/**
 * POSTs one webhook and reports whether it was accepted. Only an HTTP 200 counts;
 * a redirect is not followed and counts as a failure, because following it would send the signed
 * body somewhere the merchant never registered.
 *
 * Where it connects (see docs/decisions.md, "Webhook destinations"): the URL's hostname is
 * resolved once (`resolve`; a literal IP is taken as it is), every address is judged by
 * `checkDestination`, and if any is refused nothing is sent and the result says why
 * (`Destination refused: ...`). Otherwise the connection goes to the first checked address through
 * a `lookup` that can only answer it, with the hostname kept for `Host`, SNI and the certificate.
 *
 * The deadline covers the whole exchange, lookup included, so a receiver that never answers costs
 * at most `timeoutMs`. Never throws: every failure becomes a result with the text recorded as the
 * webhook's `last_error`.
 */
export async function sendWebhook(request: WebhookRequest, options: WebhookSendOptions): Promise<WebhookSendResult> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`Timed out after ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  try {
    const answer =
      options.fetch === undefined
        ? await sendPinned(request, options, controller.signal)
        : await sendFetch(request, options.fetch, options.maxResponseBytes, controller.signal);
    if ('refused' in answer) return { accepted: false, status: null, error: answer.refused };
    if (answer.status === 200) return { accepted: true, status: 200 };
    return { accepted: false, status: answer.status, error: `${answer.status} ${answer.reason}` };
  } catch (error) {
    if (timedOut) return { accepted: false, status: null, error: `Timed out after ${options.timeoutMs} ms` };
    return { accepted: false, status: null, error: networkError(error) };
  } finally {
    clearTimeout(timer);
  }
}
