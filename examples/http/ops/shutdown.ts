/**
 * Graceful shutdown on SIGTERM and SIGINT for the server and the worker. The first signal runs
 * `shutdown` (stop accepting, finish in-flight requests and the current batch of due work, close
 * the storage) and then exits 0; if that takes longer than `timeoutMs` the process exits 1 anyway.
 * A second signal exits at once, with the shell's code for the signal (130 for SIGINT, 143 for
 * SIGTERM), for an operator who does not want to wait.
 */
import type { OpsLogger } from './ops-logger.js';

const SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;
type ShutdownSignal = keyof typeof SIGNALS;

/** Options of {@link exitGracefullyOnSignals}. */
export interface GracefulShutdownOptions {
  readonly logger: OpsLogger;
  /** How long `shutdown` may take before the process exits 1 regardless. */
  readonly timeoutMs: number;
  /** Called before `shutdown` on the first signal (e.g. to make readiness answer 503). */
  readonly onSignal?: (signal: ShutdownSignal) => void;
  /** The message of the last line; default `stopped cleanly`. */
  readonly stoppedMessage?: string;
}

/**
 * Installs the handlers; returns a function that removes them (for a start that fails before
 * anything is running, such as a port in use).
 */
export function exitGracefullyOnSignals(shutdown: () => Promise<void>, options: GracefulShutdownOptions): () => void {
  const { logger } = options;
  let started = false;
  const handle = (signal: ShutdownSignal) => {
    if (started) {
      logger.warn({ signal }, `second ${signal}: exiting at once`);
      process.exit(128 + SIGNALS[signal]);
    }
    started = true;
    logger.info({ signal }, `${signal}: shutting down (send it again to exit at once)`);
    options.onSignal?.(signal);
    const deadline = setTimeout(() => {
      logger.error({ timeout_ms: options.timeoutMs }, `shutdown took longer than ${options.timeoutMs} ms: exiting`);
      process.exit(1);
    }, options.timeoutMs);
    // Only a shutdown that hangs needs the deadline; it must not keep a finished process alive.
    deadline.unref();
    shutdown().then(
      () => {
        clearTimeout(deadline);
        logger.info({}, options.stoppedMessage ?? 'stopped cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        clearTimeout(deadline);
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onInt = () => handle('SIGINT');
  const onTerm = () => handle('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return () => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  };
}
