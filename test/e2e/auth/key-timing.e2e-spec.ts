import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import * as apiKey from '../../../src/auth/api-key';
import { ApiKeysService } from '../../../src/auth/api-keys.service';
import { createTestApp, type TestApp } from '../../support/app';
import {
  CHECKSUM_LENGTH,
  lookAlikeKey,
  otherBase62,
  withChecksum,
} from '../../support/api-key-format';
import { createTenant } from '../../support/http';
import { listenOnLoopback, send } from '../../support/raw-http';

/*
 * Does the time of a refusal tell anything about a key? Two comparisons of like with like, as an
 * attacker measures them (whole requests, over HTTP):
 *  (a) well-formed keys that share nothing with a real key, against keys that differ from a real
 *      one only in their last random characters: both are one lookup of their HMAC, which is
 *      compared in the database's index, not character by character in JavaScript;
 *  (b) keys whose checksum fails on its first character, against keys whose checksum fails on its
 *      last: both are refused on their shape, before any lookup.
 * (Malformed keys are refused faster than well-formed ones, on purpose and without harm: the
 * checksum is public, so "malformed" is something the sender can compute for itself.)
 *
 * The statistic is a paired one: samples are taken in pairs, one of each kind back to back in an
 * order chosen by a coin, and the pairs' differences go through a Wilcoxon signed-rank test (ranks,
 * not times: a few huge outliers weigh no more than any other pair). Whatever the machine's load
 * does to the times, with no difference between the kinds the sign of each difference is that
 * coin's, so the test's false alarms stay at its level: a difference is reported only at
 * p < 0.0001, once in ten thousand runs. Each comparison has a control: the same measurement
 * against a deliberately leaking guard must report the leak.
 */
const PAIRS = 150;
const WARM_UP = 40;
const ALPHA = 0.0001;

let t: TestApp;
let port: number;
let realKey: string;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  // Every request here fails authentication, from one address.
  t = await createTestApp({ env: { AUTH_FAILURE_LIMIT_PER_MINUTE: '1000000' } });
  port = await listenOnLoopback(t.app);
  ({ key: realKey } = await createTenant(t.prisma));
});

afterAll(async () => {
  agent.destroy();
  await t.close();
});

afterEach(() => {
  jest.restoreAllMocks();
});

/** The time of one refused request, in milliseconds. */
async function timeRefusal(key: string): Promise<number> {
  const start = process.hrtime.bigint();
  const response = await send(port, '/v1/me', {
    agent,
    headers: { Authorization: `Bearer ${key}` },
  });
  const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  expect(response.status).toBe(401);
  return elapsed;
}

interface Comparison {
  /** Pairs where the first kind was slower, and where the second was. */
  firstSlower: number;
  secondSlower: number;
  /** Two-sided p-value of the Wilcoxon signed-rank test on the paired differences. */
  p: number;
  /** Median of (first - second), in milliseconds. */
  medianDifference: number;
}

/**
 * Measures pairs of refusals of the two kinds of keys and compares them. `rounds` above 1 goes on
 * measuring, PAIRS more at a time, while no difference shows: for the controls only, where what
 * matters is not to miss a leak on a machine busy enough to drown it in one round (looking again
 * would raise the false alarms of the comparisons that expect no difference).
 */
async function compare(first: () => string, second: () => string, rounds = 1): Promise<Comparison> {
  for (let i = 0; i < WARM_UP; i++) await timeRefusal(i % 2 ? first() : second());
  const differences: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < PAIRS; i++) {
      let a: number;
      let b: number;
      if (Math.random() < 0.5) {
        a = await timeRefusal(first());
        b = await timeRefusal(second());
      } else {
        b = await timeRefusal(second());
        a = await timeRefusal(first());
      }
      differences.push(a - b);
    }
    if (signedRankP(differences) < ALPHA) break;
  }
  return {
    firstSlower: differences.filter((d) => d > 0).length,
    secondSlower: differences.filter((d) => d < 0).length,
    p: signedRankP(differences),
    medianDifference: median(differences),
  };
}

/**
 * Two-sided p-value of the Wilcoxon signed-rank test (normal approximation, average ranks for
 * ties, zeros dropped). The order within each pair is random, so under "no difference" every
 * difference is as likely positive as negative, whatever the noise: the test's one assumption.
 */
function signedRankP(differences: number[]): number {
  const nonZero = differences.filter((d) => d !== 0).sort((x, y) => Math.abs(x) - Math.abs(y));
  const n = nonZero.length;
  if (n === 0) return 1;
  let positiveRanks = 0;
  let tieCorrection = 0;
  for (let i = 0; i < n;) {
    let j = i;
    while (j + 1 < n && Math.abs(nonZero[j + 1]) === Math.abs(nonZero[i])) j += 1;
    const rank = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) if (nonZero[k] > 0) positiveRanks += rank;
    const tied = j - i + 1;
    tieCorrection += tied ** 3 - tied;
    i = j + 1;
  }
  const mean = (n * (n + 1)) / 4;
  const variance = (n * (n + 1) * (2 * n + 1)) / 24 - tieCorrection / 48;
  const z = Math.abs(positiveRanks - mean) / Math.sqrt(variance);
  return Math.min(1, 2 * (1 - normalCdf(z)));
}

function normalCdf(z: number): number {
  // Abramowitz and Stegun 7.1.26: |error| < 1.5e-7, far below any p-value that matters here.
  const x = z / Math.SQRT2;
  const k = 1 / (1 + 0.3275911 * x);
  const poly =
    k *
    (0.254829592 + k * (-0.284496736 + k * (1.421413741 + k * (-1.453152027 + k * 1.061405429))));
  return 0.5 * (1 + (1 - poly * Math.exp(-x * x)));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const describeComparison = (c: Comparison): string =>
  `first slower in ${c.firstSlower} pairs, second in ${c.secondSlower}, median difference ` +
  `${c.medianDifference.toFixed(3)} ms, p = ${c.p.toExponential(2)}`;

// ---- The keys compared ------------------------------------------------------------------------

/** A well-formed key unrelated to the real one. */
const unrelatedKey = () => apiKey.generateApiKey();
/** The real key with its last 6 random characters changed, and a valid checksum. */
const nearKey = () => lookAlikeKey(realKey, realKey.length - CHECKSUM_LENGTH - 6);
/** An unrelated key whose checksum is wrong from its first, or only on its last, character. */
function badChecksum(at: 'first' | 'last'): string {
  const key = unrelatedKey();
  const i = at === 'first' ? key.length - CHECKSUM_LENGTH : key.length - 1;
  return key.slice(0, i) + otherBase62(key[i]) + key.slice(i + 1);
}

describe('the time of a refusal', () => {
  it('checks that the keys compared are what they claim to be', () => {
    expect(apiKey.isWellFormedApiKey(unrelatedKey())).toBe(true);
    const near = nearKey();
    expect(apiKey.isWellFormedApiKey(near)).toBe(true);
    expect(near.slice(0, -CHECKSUM_LENGTH - 6)).toBe(realKey.slice(0, -CHECKSUM_LENGTH - 6));
    expect(near).not.toBe(realKey);
    for (const at of ['first', 'last'] as const) {
      const key = badChecksum(at);
      expect(apiKey.isWellFormedApiKey(key)).toBe(false);
      expect(withChecksum(key.slice(0, -CHECKSUM_LENGTH))).not.toBe(key);
    }
  });

  it('(a) does not tell a key near a real one from an unrelated one', async () => {
    const result = await compare(unrelatedKey, nearKey);

    expectSignificance(result, false);
  }, 300_000);

  it('(a, control) would tell them apart if keys near a real one took 10 ms longer', async () => {
    // As if the service looked keys up by their displayed prefix and then compared in JavaScript.
    const keys = t.app.get(ApiKeysService);
    const authenticate = keys.authenticate.bind(keys);
    const prefix = apiKey.displayPrefix(realKey);
    jest.spyOn(keys, 'authenticate').mockImplementation(async (presented) => {
      if (presented.key.startsWith(prefix)) await sleep(10);
      return authenticate(presented);
    });

    const result = await compare(unrelatedKey, nearKey, 3);

    expectSignificance(result, true);
  }, 300_000);

  it('(b) does not tell where a checksum goes wrong', async () => {
    const result = await compare(
      () => badChecksum('first'),
      () => badChecksum('last'),
    );

    expectSignificance(result, false);
  }, 300_000);

  it('(b, control) would tell them apart if a later mismatch cost 3 ms more', async () => {
    // As if the checksum were compared character by character, slowly enough to be seen.
    const isWellFormed = apiKey.isWellFormedApiKey;
    jest.spyOn(apiKey, 'isWellFormedApiKey').mockImplementation((candidate: string) => {
      const body = candidate.slice(0, -CHECKSUM_LENGTH);
      const expected = withChecksum(body).slice(-CHECKSUM_LENGTH);
      if (expected[0] === candidate[candidate.length - CHECKSUM_LENGTH]) busyWait(3);
      return isWellFormed(candidate);
    });

    const result = await compare(
      () => badChecksum('first'),
      () => badChecksum('last'),
      3,
    );

    expectSignificance(result, true);
  }, 300_000);
});

function busyWait(ms: number): void {
  const until = process.hrtime.bigint() + BigInt(ms * 1e6);
  while (process.hrtime.bigint() < until);
}

/** Whether the difference is significant, with the measurements in the message of a failure. */
function expectSignificance(result: Comparison, significant: boolean): void {
  if (result.p < ALPHA === significant) return;
  const expected = significant ? 'a difference' : 'no difference';
  throw new Error(`Expected ${expected} at p < ${ALPHA}: ${describeComparison(result)}`);
}
