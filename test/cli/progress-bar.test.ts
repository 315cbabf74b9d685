import { describe, expect, it } from 'vitest';
import { formatDuration, ProgressBar, progressLine, sumCounts } from '../../bin/progress-bar.js';

const counts = (processed: number, renewed = processed, declined = 0, failed = 0, errors = 0) => ({
  processed,
  renewed,
  declined,
  failed,
  errors,
});

describe('run-due progress bar', () => {
  it('shows the share of a known total, the rate, the ETA and the counts', () => {
    expect(progressLine({ counts: counts(4_210, 4_100, 90, 10, 10), total: 10_000, elapsedMs: 5_000 })).toBe(
      '[##########--------------] 4,210/10,000  42%  842/s  ETA 7s  renewed 4,100  declined 90  failed 10  errors 10',
    );
    // Nothing done yet: no rate and no ETA rather than a division by zero.
    expect(progressLine({ counts: counts(0), total: 50, elapsedMs: 0 })).toBe(
      '[------------------------] 0/50   0%  -/s  ETA -  renewed 0  declined 0  failed 0  errors 0',
    );
  });

  it('grows the total when the run finds more than was due at the start, and is full when done', () => {
    // Retries and next renewals scheduled during the run can be due before --until too.
    expect(progressLine({ counts: counts(12), total: 10, elapsedMs: 1_000 })).toMatch(/^\[#{24}\] 12\/12 100% /);
    expect(progressLine({ counts: counts(7), total: 10, elapsedMs: 125_000, done: true })).toBe(
      '[########################] 7/7 100%  0/s  in 2:05  renewed 7  declined 0  failed 0  errors 0',
    );
  });

  it('without a total, moves a block back and forth and shows what is done', () => {
    const at = (frame: number) =>
      progressLine({ counts: counts(3), elapsedMs: 2_000, frame })
        .slice(0, 26)
        .indexOf('#') - 1;
    expect([0, 1, 19, 20, 21, 40, 41].map(at)).toEqual([0, 1, 19, 20, 19, 0, 1]);
    expect(progressLine({ counts: counts(3), elapsedMs: 2_000, frame: 0 })).toBe(
      '[####                    ] 3 done  2/s  2s  renewed 3  declined 0  failed 0  errors 0',
    );
  });

  it('formats durations', () => {
    expect([0, 7.4, 59.6, 61, 3_599, 3_600, 86_399].map(formatDuration)).toEqual([
      '0s',
      '7s',
      '1:00',
      '1:01',
      '59:59',
      '1:00:00',
      '23:59:59',
    ]);
  });

  it('redraws in place at most every 100 ms, and always draws the final line', () => {
    let now = 0;
    const out: string[] = [];
    const bar = new ProgressBar((text) => out.push(text), { now: () => now, total: 100 });
    for (let i = 1; i <= 100; i++) {
      now += 7; // an item every 7 ms: 700 ms in all
      bar.update(counts(i));
    }
    bar.tick(); // 0 ms after the last draw: nothing
    bar.finish(counts(100, 98, 2));
    bar.finish(counts(100)); // a second finish does nothing
    const frames = out.join('').split('\r').slice(1);
    // First draw at 7 ms, then one per 100 ms of the 700 ms, then the final line.
    expect(frames.length).toBeLessThanOrEqual(1 + 7 + 1);
    expect(frames.length).toBeGreaterThanOrEqual(7);
    expect(out.join('').endsWith('\n')).toBe(true);
    expect(frames.at(-1)).toBe(
      '[########################] 100/100 100%  143/s  in 1s  renewed 98  declined 2  failed 0  errors 0\x1b[K\n',
    );
  });

  it('cuts the line to the terminal width so that it never wraps', () => {
    const out: string[] = [];
    const bar = new ProgressBar((text) => out.push(text), { now: () => 1_000, columns: () => 40 });
    bar.update(counts(5));
    expect(out).toEqual([`\r${'[####                    ] 5 done  -/s  0s  renewed 5'.slice(0, 39)}\x1b[K`]);
    bar.stop();
    expect(out.at(-1)).toBe('\n');
  });

  it('adds up the workers', () => {
    expect(sumCounts([counts(3, 2, 1), counts(4, 1, 1, 1, 1)])).toEqual(counts(7, 3, 2, 1, 1));
  });
});
