/**
 * Readiness: whether this process can serve billing requests now. The storage must answer a read of
 * the due-work table within a time limit (a database that is down, a closed storage or a pool
 * waiting for a connection all fail it), and that read must find the schema (a database nobody
 * migrated fails it with a reason that says to migrate). A process that is shutting down is not
 * ready either, so that a load balancer stops sending it requests while it drains.
 */
import type { BillingEngine } from 'billing-engine';

export type Readiness =
  | { readonly ready: true }
  | { readonly ready: false; readonly reason: string; readonly cause?: unknown };

/** How long the readiness read may take before the storage counts as unreachable. */
export const DEFAULT_READINESS_TIMEOUT_MS = 2000;

/** What a database says when a table the engine needs does not exist: SQLite, Postgres, memory. */
const MISSING_SCHEMA = /no such table|relation "?[\w.]+"? does not exist|undefined_table|not migrated/i;

/**
 * Reads the storage once and says whether the process is ready. The reasons are short and
 * generic (no host names, no driver text); the error behind one is in `cause`, for the log.
 */
export async function checkReadiness(
  engine: Pick<BillingEngine, 'countDue'>,
  options: { readonly timeoutMs?: number; readonly draining?: () => boolean } = {},
): Promise<Readiness> {
  if (options.draining?.() === true) return { ready: false, reason: 'shutting down' };
  const timeoutMs = options.timeoutMs ?? DEFAULT_READINESS_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
    timer.unref?.();
  });
  try {
    const answer = await Promise.race([engine.countDue().then(() => 'ok' as const), timedOut]);
    if (answer === 'timeout') return { ready: false, reason: `storage did not answer within ${timeoutMs} ms` };
    return { ready: true };
  } catch (error) {
    const text = error instanceof Error ? `${error.message} ${String((error as { code?: unknown }).code ?? '')}` : '';
    if (MISSING_SCHEMA.test(text)) {
      return { ready: false, reason: 'migrations not applied: run `billing-engine migrate`', cause: error };
    }
    return { ready: false, reason: 'storage unreachable', cause: error };
  } finally {
    clearTimeout(timer);
  }
}
