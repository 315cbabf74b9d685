/**
 * The progress bar of `billing-engine run-due` on a terminal: one line redrawn in place with `\r`
 * (at most every 100 ms), fed by `runDue`'s `onProgress` counts. With a known total it shows how
 * far along the run is and an ETA (`run-due` passes `engine.countDue()`, what was due at the start);
 * without one it shows a moving block, the count done and the rate. Hand-written: a single line
 * needs no library.
 */

/** The counts the bar shows (a subset of `RunDueSummary`). */
export interface ProgressCounts {
  readonly processed: number;
  readonly renewed: number;
  readonly declined: number;
  readonly failed: number;
  readonly errors: number;
}

/** What one line of the bar is drawn from. */
export interface ProgressLineInput {
  readonly counts: ProgressCounts;
  /** Items due when the run started, when known. Work scheduled during the run can exceed it. */
  readonly total?: number;
  readonly elapsedMs: number;
  /** The final line: the run is over, so the bar is full whatever the total said. */
  readonly done?: boolean;
  /** Redraw number, which moves the block of a bar without a total. */
  readonly frame?: number;
}

/** Width of the bar between its brackets. */
const BAR_WIDTH = 24;
/** Width of the moving block of a bar without a total. */
const BLOCK_WIDTH = 4;

const count = (n: number) => n.toLocaleString('en-US');

/** A duration in whole seconds as `7s`, `2:03` or `1:02:03`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

/**
 * One line of the bar, e.g.
 * `[##########--------------] 4,210/10,000  42%  812/s  ETA 7s  renewed 4,100  declined 100  failed 0  errors 10`.
 */
export function progressLine(input: ProgressLineInput): string {
  const { counts, elapsedMs } = input;
  const seconds = elapsedMs / 1000;
  const perSecond = seconds > 0 ? counts.processed / seconds : 0;
  const rate = seconds > 0 && counts.processed > 0 ? `${count(Math.round(perSecond))}/s` : '-/s';
  // Work the run itself scheduled (a retry, the next renewal) can be due before `until` too.
  const total =
    input.done === true
      ? counts.processed
      : input.total === undefined
        ? undefined
        : Math.max(input.total, counts.processed);
  let head: string;
  if (total === undefined) {
    const span = BAR_WIDTH - BLOCK_WIDTH;
    const step = (input.frame ?? 0) % (2 * span);
    const at = step <= span ? step : 2 * span - step;
    head = `[${' '.repeat(at)}${'#'.repeat(BLOCK_WIDTH)}${' '.repeat(span - at)}] ${count(counts.processed)} done  ${rate}  ${formatDuration(seconds)}`;
  } else {
    const share = total === 0 ? 1 : counts.processed / total;
    const filled = Math.min(BAR_WIDTH, Math.floor(share * BAR_WIDTH));
    const eta =
      input.done === true
        ? `in ${formatDuration(seconds)}`
        : perSecond > 0
          ? `ETA ${formatDuration((total - counts.processed) / perSecond)}`
          : 'ETA -';
    head =
      `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${count(counts.processed)}/${count(total)} ` +
      `${String(Math.floor(share * 100)).padStart(3)}%  ${rate}  ${eta}`;
  }
  return `${head}  renewed ${count(counts.renewed)}  declined ${count(counts.declined)}  failed ${count(counts.failed)}  errors ${count(counts.errors)}`;
}

/** Options of {@link ProgressBar}. */
export interface ProgressBarOptions {
  /** Items due at the start, when known. */
  readonly total?: number;
  /** Milliseconds since some origin; `performance.now` by default. */
  readonly now?: () => number;
  /** Least time between two redraws (default 100 ms: at most ten a second). */
  readonly intervalMs?: number;
  /** The terminal's width, to keep the line from wrapping (a wrapped line cannot be redrawn with `\r`). */
  readonly columns?: () => number | undefined;
}

const ZERO: ProgressCounts = { processed: 0, renewed: 0, declined: 0, failed: 0, errors: 0 };

/** A line redrawn in place on `write` (a terminal), at most every `intervalMs`. */
export class ProgressBar {
  readonly #write: (text: string) => void;
  readonly #now: () => number;
  readonly #intervalMs: number;
  readonly #total: number | undefined;
  readonly #columns: () => number | undefined;
  readonly #started: number;
  #counts: ProgressCounts = ZERO;
  #lastDraw = Number.NEGATIVE_INFINITY;
  #frame = 0;
  #finished = false;

  constructor(write: (text: string) => void, options: ProgressBarOptions = {}) {
    this.#write = write;
    this.#now = options.now ?? (() => performance.now());
    this.#intervalMs = options.intervalMs ?? 100;
    this.#total = options.total;
    this.#columns = options.columns ?? (() => undefined);
    this.#started = this.#now();
  }

  /** New counts; redraws unless the last redraw was less than the interval ago. */
  update(counts: ProgressCounts): void {
    this.#counts = counts;
    this.tick();
  }

  /** Redraws with the last counts if the interval has passed (for a timer, so rate and time move). */
  tick(): void {
    if (this.#finished) return;
    const now = this.#now();
    if (now - this.#lastDraw < this.#intervalMs) return;
    this.#draw(now, false);
  }

  /** Draws the final line (always) and ends it with a newline; later calls do nothing. */
  finish(counts: ProgressCounts = this.#counts): void {
    if (this.#finished) return;
    this.#counts = counts;
    this.#draw(this.#now(), true);
    this.#write('\n');
    this.#finished = true;
  }

  /** Leaves the line as it is (the run failed) and moves to the next line; later calls do nothing. */
  stop(): void {
    if (this.#finished) return;
    this.#draw(this.#now(), false);
    this.#write('\n');
    this.#finished = true;
  }

  #draw(now: number, done: boolean): void {
    this.#lastDraw = now;
    const line = progressLine({
      counts: this.#counts,
      elapsedMs: now - this.#started,
      done,
      frame: this.#frame++,
      ...(this.#total === undefined ? {} : { total: this.#total }),
    });
    const columns = this.#columns();
    const fitted = columns !== undefined && columns > 1 && line.length >= columns ? line.slice(0, columns - 1) : line;
    // `\r` back to the start, the line, then erase whatever a longer earlier line left behind.
    this.#write(`\r${fitted}\x1b[K`);
  }
}

/** The sum of several workers' latest counts. */
export function sumCounts(all: readonly ProgressCounts[]): ProgressCounts {
  return all.reduce(
    (sum, c) => ({
      processed: sum.processed + c.processed,
      renewed: sum.renewed + c.renewed,
      declined: sum.declined + c.declined,
      failed: sum.failed + c.failed,
      errors: sum.errors + c.errors,
    }),
    ZERO,
  );
}
