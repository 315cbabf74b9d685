import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { runtimeFolders } from '../../docker/runtime-packages.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** One Dockerfile instruction: its keyword and its arguments, continuation lines joined. */
interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** The stages of a Dockerfile, each with its name and instructions (comments and blank lines dropped). */
function stages(dockerfile: string): { name: string | undefined; base: string; instructions: Instruction[] }[] {
  const logical = dockerfile
    .replaceAll(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const out: { name: string | undefined; base: string; instructions: Instruction[] }[] = [];
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      out.push({ name: match?.[2], base: match?.[1] ?? '', instructions: [] });
    } else {
      out.at(-1)?.instructions.push(instruction);
    }
  }
  return out;
}

/** Whether a Docker daemon answers, and if not, why (the first line `docker info` gave). */
function dockerDaemon(): { available: true } | { available: false; why: string } {
  const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 20_000 });
  if (info.error !== undefined) return { available: false, why: `docker is not installed (${info.error.message})` };
  if (info.status !== 0) {
    const why = `${info.stderr}${info.stdout}`.split('\n').find((l) => l.trim() !== '') ?? `exit ${info.status}`;
    return { available: false, why: why.trim() };
  }
  return { available: true };
}

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const all = stages(dockerfile);
  const runtime = all.at(-1);
  const build = all.find((stage) => stage.name === 'build');
  const runs = (stage: (typeof all)[number] | undefined) =>
    (stage?.instructions ?? []).filter((i) => i.keyword === 'RUN').map((i) => i.args);

  it('lints: a build stage with dev dependencies, then a runtime stage from the lock without them', () => {
    expect(all.map((stage) => stage.name)).toEqual(['build', 'runtime']);
    expect(runtime?.base).toBe(build?.base);
    expect(runs(build)).toContain('npm ci');
    expect(runs(build)).toContain('npm run build');
    expect(runs(runtime).some((run) => /^npm ci --omit=dev\b/.test(run))).toBe(true);
    // `npm install` ignores the lock file: never in an image build.
    for (const run of [...runs(build), ...runs(runtime)]) expect(run).not.toMatch(/\bnpm (install|i)\b/);
    // The runtime stage copies the build, never the build stage's whole node_modules.
    const copies = (runtime?.instructions ?? []).filter((i) => i.keyword === 'COPY').map((i) => i.args);
    expect(copies).toContain('--from=build /app/dist ./dist');
    expect(copies.some((copy) => /--from=build \/app\/node_modules/.test(copy))).toBe(false);
  });

  it('lints: runs as a non-root user with a HEALTHCHECK on /healthz and the CLI as the entry point', () => {
    const keywords = (runtime?.instructions ?? []).map((i) => i.keyword);
    const user = (runtime?.instructions ?? []).filter((i) => i.keyword === 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(['root', '0', '0:0']).not.toContain(user);
    // USER comes before the entry point, and nothing after it runs as root again.
    expect(keywords.lastIndexOf('USER')).toBeLessThan(keywords.indexOf('ENTRYPOINT'));
    expect(keywords.slice(keywords.lastIndexOf('USER')).includes('RUN')).toBe(false);
    const healthcheck = (runtime?.instructions ?? []).find((i) => i.keyword === 'HEALTHCHECK')?.args ?? '';
    expect(healthcheck).toMatch(/^--interval=\S+ .*CMD /);
    expect(healthcheck).toContain('/healthz');
    expect((runtime?.instructions ?? []).find((i) => i.keyword === 'ENTRYPOINT')?.args).toBe(
      '["node", "dist/bin/billing-engine.js"]',
    );
    // No secret is baked into the image.
    for (const env of (runtime?.instructions ?? []).filter((i) => i.keyword === 'ENV')) {
      expect(env.args).not.toMatch(/TOKEN|PASSWORD|SECRET|DATABASE_URL=postgres/i);
    }
  });

  it('carries the runtime packages npm ci --omit=dev leaves out, with their dependencies, from the lock file', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, unknown> };
    const names = /docker\/runtime-packages\.mjs ([^|]+)\|/.exec(runs(build).join('\n'))?.[1]?.trim().split(/\s+/);
    expect(names).toEqual(expect.arrayContaining(['pg', 'kysely', 'better-sqlite3', 'pino', 'prom-client']));
    const folders = runtimeFolders(lock, names ?? []);
    // pg's own dependencies come along (the pool and the protocol), each where the lock puts it.
    expect(folders).toEqual(
      expect.arrayContaining(['node_modules/pg', 'node_modules/pg-pool', 'node_modules/pg-protocol']),
    );
    for (const folder of folders) expect(existsSync(join(root, folder)), folder).toBe(true);
    expect(() => runtimeFolders(lock, ['no-such-package-anywhere'])).toThrow('is not in the lock file');
  });

  it('has a .dockerignore that keeps node_modules, builds, databases and secrets out of the context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', 'data', '.env', '*.sqlite']));
  });

  it(
    'builds the image when a Docker daemon answers (else says why it did not)',
    () => {
      const daemon = dockerDaemon();
      if (!daemon.available) {
        console.warn(`[docker] image build skipped: no Docker daemon answers \`docker info\`: ${daemon.why}`);
        return;
      }
      const built = spawnSync('docker', ['build', '--tag', 'billing-engine:test', root], {
        encoding: 'utf8',
        timeout: 20 * 60_000,
      });
      expect(built.status, `${built.stdout}\n${built.stderr}`).toBe(0);
      const inspected = spawnSync(
        'docker',
        ['image', 'inspect', 'billing-engine:test', '--format', '{{.Config.User}} {{json .Config.Healthcheck.Test}}'],
        { encoding: 'utf8' },
      );
      expect(inspected.stdout).toMatch(/^node \[.*\/healthz/);
    },
    25 * 60_000,
  );
});

describe('compose.yaml', () => {
  it('runs Postgres, the server and a worker from the image, the server on loopback with health and a grace period', () => {
    const compose = parseYaml(read('compose.yaml'), { merge: true }) as {
      services: Record<
        string,
        {
          image?: string;
          build?: unknown;
          command?: string[];
          environment?: Record<string, string>;
          ports?: string[];
          depends_on?: Record<string, { condition: string }>;
          stop_grace_period?: string;
        }
      >;
    };
    const { postgres, server, worker } = compose.services;
    expect(Object.keys(compose.services).sort()).toEqual(['postgres', 'server', 'worker']);
    expect(postgres?.image).toMatch(/^postgres:/);
    expect(server?.build).toBe('.');
    expect(server?.command).toEqual(['serve']);
    expect(worker?.command).toEqual(['worker']);
    expect(worker?.image).toBe(server?.image);
    for (const service of [server, worker]) {
      expect(service?.environment?.DATABASE_URL).toMatch(/^postgres:\/\/\w+:\w+@postgres:5432\//);
      // The metrics token comes from the operator, never from the file.
      expect(service?.environment?.BILLING_METRICS_TOKEN).toMatch(/^\$\{BILLING_METRICS_TOKEN:\?/);
      expect(service?.stop_grace_period).toBe('40s');
    }
    expect(server?.ports).toEqual(['127.0.0.1:3000:3000']);
    expect(server?.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(worker?.depends_on?.server?.condition).toBe('service_healthy');
    expect(worker?.environment?.BILLING_METRICS_PORT).toBe('9464');
  });
});
