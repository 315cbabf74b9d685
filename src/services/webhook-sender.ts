import { STATUS_CODES } from 'node:http';

/** One HTTP POST of a webhook: where, what and with which headers. */
export interface WebhookRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** Limits of one send. */
export interface WebhookSendOptions {
  /** The fetch to use (the global one by default in the service; tests may inject another). */
  readonly fetch: typeof fetch;
  /** The whole exchange (connect, headers, reading the response) is abandoned after this long. */
  readonly timeoutMs: number;
  /** At most this much of a response body is read; the rest is discarded by closing the stream. */
  readonly maxResponseBytes: number;
}

/** What came of one send: accepted (HTTP 200) or not, with the error text for `last_error`. */
export type WebhookSendResult =
  | { readonly accepted: true; readonly status: 200 }
  | { readonly accepted: false; readonly status: number | null; readonly error: string };

/** The receiver's reason phrase is its own text: keep it short and printable before it lands in a record. */
function reasonPhrase(response: Response): string {
  const given = response.statusText
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(0, 100);
  return given || STATUS_CODES[response.status] || 'Unknown Status';
}

/** Rejects when `signal` aborts, so even a fetch that ignores its signal cannot hold the worker past the deadline. */
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

/**
 * Reads at most `limit` bytes of the body and then cancels the stream. A small answer is read to
 * its end so the connection can be reused; a huge or endless one is cut off after the first few
 * KB, so a receiver can never make the worker buffer or wait for its whole body.
 */
async function drain(response: Response, limit: number, signal: AbortSignal): Promise<void> {
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

function networkError(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  if (typeof code === 'string') return `Connection failed: ${code}`;
  const message = cause instanceof Error ? cause.message : String(cause);
  return `Connection failed: ${message.replace(/[^\x20-\x7e]/g, '').slice(0, 200)}`;
}

/**
 * POSTs one webhook and reports whether it was accepted. Only an HTTP 200 counts (reference §3.1);
 * a redirect is not followed (`redirect: 'manual'`) and counts as a failure, because following it
 * would send the signed body somewhere the merchant never registered. The deadline covers the
 * whole exchange, so a receiver that never answers costs at most `timeoutMs`. Never throws: every
 * failure becomes a result with the text recorded as the webhook's `last_error`.
 */
export async function sendWebhook(request: WebhookRequest, options: WebhookSendOptions): Promise<WebhookSendResult> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`Timed out after ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  try {
    const response = await untilAborted(
      options.fetch(request.url, {
        method: 'POST',
        body: request.body,
        headers: request.headers,
        redirect: 'manual',
        signal: controller.signal,
      }),
      controller.signal,
    );
    // The status is decided by now; the body is read only to free the connection, and its errors
    // (an endless body cut off by the deadline) do not change the outcome.
    await drain(response, options.maxResponseBytes, controller.signal).catch(() => undefined);
    if (response.status === 200) return { accepted: true, status: 200 };
    return { accepted: false, status: response.status, error: `${response.status} ${reasonPhrase(response)}` };
  } catch (error) {
    if (timedOut) return { accepted: false, status: null, error: `Timed out after ${options.timeoutMs} ms` };
    return { accepted: false, status: null, error: networkError(error) };
  } finally {
    clearTimeout(timer);
  }
}
