/**
 * Vitest setup file: property suites run with a fixed seed in CI, so a green main stays green, and
 * with a random seed elsewhere, so developers keep exploring new cases. `FC_SEED` replays a run.
 * fast-check's failure message names the seed and the shrunk counterexample, so any failure can be
 * replayed with FC_SEED.
 */
import fc from 'fast-check';

const CI_SEED = 20_261_124;

function chooseSeed(): { seed: number } {
  const given = process.env.FC_SEED;
  if (given !== undefined && given !== '' && Number.isSafeInteger(Number(given))) {
    return { seed: Number(given) };
  }
  if (process.env.CI) return { seed: CI_SEED };
  return { seed: Math.floor(Math.random() * 0x7fffffff) };
}

const { seed } = chooseSeed();
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
