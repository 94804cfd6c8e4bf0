import type fc from 'fast-check';

/**
 * Options of every `fc.assert` of the generated tests. A failure prints the seed and the path of
 * the shrunk counterexample; to replay it, run the same file with them:
 *
 *   FC_SEED=<seed> FC_PATH=<path> npx jest test/e2e/lists/fuzz-query.e2e-spec.ts
 *
 * FC_SEED alone replays the whole run (with shrinking); FC_PATH also jumps to the counterexample.
 */
export function propertyOptions<Ts>(numRuns: number): fc.Parameters<Ts> {
  const seed = process.env.FC_SEED;
  const path = process.env.FC_PATH;
  return {
    numRuns,
    ...(seed !== undefined && seed !== '' && { seed: Number(seed) }),
    ...(path !== undefined && path !== '' && { path }),
  };
}
