/**
 * Runs race workers (`race-worker.ts`) as separate Node processes and starts their races at the
 * same moment: every worker first connects and reports `ready`, then all get `go` together.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RaceWorkerArgs, RaceWorkerResult } from './race-worker.js';

const WORKER = fileURLToPath(new URL('./race-worker.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Running {
  readonly child: ChildProcessWithoutNullStreams;
  readonly ready: Promise<void>;
  readonly result: Promise<RaceWorkerResult>;
}

function start(args: RaceWorkerArgs, timeoutMs: number): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(args)], {
    cwd: ROOT,
    env: process.env,
  });
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('ready\n')) markReady();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const result = new Promise<RaceWorkerResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`race worker ${args.owner} timed out; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const line = stdout
        .split('\n')
        .map((l) => l.trim())
        .find((l) => l.startsWith('{'));
      if (code !== 0 || line === undefined) {
        reject(new Error(`race worker ${args.owner} exited with ${code}; stderr: ${stderr}`));
        return;
      }
      resolve(JSON.parse(line) as RaceWorkerResult);
    });
  });
  // Keep an early failure from surfacing as an unhandled rejection while we wait for `ready`.
  result.catch(() => {});
  return { child, ready, result };
}

/** Starts one process per argument set, releases them together, and returns their results in order. */
export async function runRaceProcesses(
  all: readonly RaceWorkerArgs[],
  timeoutMs = 60_000,
): Promise<RaceWorkerResult[]> {
  const running = all.map((args) => start(args, timeoutMs));
  try {
    // A worker that dies before it is ready fails the race instead of hanging it.
    await Promise.race([Promise.all(running.map((r) => r.ready)), Promise.all(running.map((r) => r.result))]);
    for (const { child } of running) child.stdin.write('go\n');
    return await Promise.all(running.map((r) => r.result));
  } finally {
    for (const { child } of running) if (child.exitCode === null) child.kill('SIGKILL');
  }
}
