/**
 * Samples the process's memory every 50 ms while a run goes on, to report its peak RSS and peak
 * V8 heap. A baseline is taken first, after a full garbage collection when one can be forced, so
 * that what a run adds can be told apart from what the process already held.
 *
 * A timer alone is not enough: on the memory and SQLite adapters every storage call settles as a
 * microtask (better-sqlite3 is synchronous), so a run never yields to the timer queue and an
 * interval would not fire until it ends. The run therefore also calls {@link MemorySampler.tick}
 * (through {@link sampledStorage}, once per transaction), which samples when 50 ms have passed.
 *
 * The peak heap in use counts garbage not yet collected, so it moves with when V8 happens to
 * collect, not with what the run holds. The sampler therefore also forces a full GC every
 * `liveIntervalMs` (default 5 s: a full GC of a heap holding a seeded book takes tens of ms, time
 * the measured run pays) and records the
 * heap in use right after it: the live heap, what the run really retains.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Storage } from 'billing-engine';

/** Peaks of one sampled run, in bytes. */
export interface MemoryPeaks {
  /** RSS and heap in use just before the run (after a forced GC when available). */
  readonly baselineRss: number;
  readonly baselineHeapUsed: number;
  readonly peakRss: number;
  readonly peakHeapUsed: number;
  readonly samples: number;
  /**
   * The largest heap in use right after a forced full GC (the live heap), taken every
   * `liveIntervalMs` and at the end; undefined when no GC can be forced.
   */
  readonly peakLiveHeap: number | undefined;
  /** How many forced-GC samples gave {@link peakLiveHeap}. */
  readonly liveSamples: number;
}

/** A running sampler. */
export interface MemorySampler {
  /** Takes a sample if the interval has passed since the last one; cheap enough to call per transaction. */
  tick(): void;
  /** Stops sampling and returns the peaks (one last sample is taken first). */
  stop(): MemoryPeaks;
}

let forcedGc: (() => void) | undefined | null = null;

/**
 * A function that runs a full GC, or undefined. `npm run bench` starts node without
 * `--expose-gc`; setting the flag at run time and fetching `gc` from a new context is the
 * documented V8 way to get it anyway.
 */
export function forceGc(): (() => void) | undefined {
  if (forcedGc === null) {
    try {
      setFlagsFromString('--expose-gc');
      const gc: unknown = runInNewContext('gc');
      forcedGc = typeof gc === 'function' ? (gc as () => void) : undefined;
    } catch {
      forcedGc = undefined;
    }
  }
  return forcedGc;
}

/** Starts sampling every `intervalMs` (default 50), and the live heap every `liveIntervalMs`. */
export function startMemorySampler(intervalMs = 50, liveIntervalMs = 5000): MemorySampler {
  const gc = forceGc();
  gc?.();
  const base = process.memoryUsage();
  let peakLiveHeap: number | undefined;
  let liveSamples = 0;
  let lastLive = performance.now();
  const sampleLive = () => {
    if (gc === undefined) return;
    gc();
    lastLive = performance.now();
    const used = process.memoryUsage().heapUsed;
    if (peakLiveHeap === undefined || used > peakLiveHeap) peakLiveHeap = used;
    liveSamples += 1;
  };
  let peakRss = base.rss;
  let peakHeapUsed = base.heapUsed;
  let samples = 1;
  let last = performance.now();
  const sample = () => {
    last = performance.now();
    const now = process.memoryUsage();
    if (now.rss > peakRss) peakRss = now.rss;
    if (now.heapUsed > peakHeapUsed) peakHeapUsed = now.heapUsed;
    samples += 1;
  };
  const timer = setInterval(sample, intervalMs);
  // The sampler must never be what keeps the process alive.
  timer.unref();
  return {
    tick() {
      const now = performance.now();
      if (now - last >= intervalMs) sample();
      if (now - lastLive >= liveIntervalMs) sampleLive();
    },
    stop() {
      clearInterval(timer);
      sample();
      sampleLive();
      return {
        baselineRss: base.rss,
        baselineHeapUsed: base.heapUsed,
        peakRss,
        peakHeapUsed,
        samples,
        peakLiveHeap,
        liveSamples,
      };
    },
  };
}

/** `storage` with a sampler tick before each transaction; otherwise the same storage. */
export function sampledStorage(storage: Storage, sampler: MemorySampler): Storage {
  return {
    capabilities: storage.capabilities,
    transaction(work, options) {
      sampler.tick();
      return storage.transaction(work, options);
    },
    migrate: () => storage.migrate(),
    close: () => storage.close(),
  };
}
