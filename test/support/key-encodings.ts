import fc from 'fast-check';
import { BASE62, withChecksum } from './api-key-format';

/*
 * Keys as a client may send them: glued to other text and percent-encoded, in part or whole, once
 * or several times, hex digits in either case. The unit tests of the redaction and the logging
 * tests generate them, then look for the key in every reading of what came out.
 */

/** Every reading of a text a reader may make: as written, then percent-decoded again and again. */
export function readings(text: string): string[] {
  const all = [text];
  for (let round = 0; round < 40; round++) {
    const next = all[all.length - 1].replace(/%([0-7][0-9a-f])/gi, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
    if (next === all[all.length - 1]) break;
    all.push(next);
  }
  return all;
}

/**
 * What must not be found in any reading of an output that a key went into: a key-shaped value,
 * or a piece of that key's random part long enough to matter (16 characters, ~95 bits).
 */
export function leaksOf(output: string, key: string): string[] {
  const random = key.slice(3);
  const pieces = [random.slice(0, 16), random.slice(-16)];
  const found: string[] = [];
  for (const reading of readings(output)) {
    const shaped = /st_[0-9A-Za-z]{32}/.exec(reading);
    if (shaped) found.push(shaped[0]);
    for (const piece of pieces) if (reading.includes(piece)) found.push(piece);
  }
  return found;
}

/** A tiny PRNG, so that a run's encodings follow from one generated seed (replayed by FC_SEED). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type HexCase = 'upper' | 'lower' | 'mixed';

/** Percent-encodes each character with probability `share` (its UTF-8 bytes), hex in `hexCase`. */
export function encodeOnce(
  text: string,
  share: number,
  hexCase: HexCase,
  random: () => number,
): string {
  let out = '';
  for (const char of text) {
    if (random() >= share) {
      out += char;
      continue;
    }
    const hex = Buffer.from(char, 'utf8').toString('hex');
    const upper = hexCase === 'upper' || (hexCase === 'mixed' && random() < 0.5);
    out += (upper ? hex.toUpperCase() : hex).replace(/(..)/g, '%$1');
  }
  return out;
}

export interface Encoding {
  /** Rounds of encoding, each over the previous one's result (`%73` then `%2573` or `%%37%33`). */
  rounds: number;
  /** The share of characters encoded in each round: none, some, half, every one. */
  share: number;
  hexCase: HexCase;
  seed: number;
}

export const encodings: fc.Arbitrary<Encoding> = fc.record({
  rounds: fc.integer({ min: 1, max: 4 }),
  share: fc.constantFrom(0, 0.1, 0.5, 1),
  hexCase: fc.constantFrom<HexCase>('upper', 'lower', 'mixed'),
  seed: fc.integer(),
});

export function encode(text: string, { rounds, share, hexCase, seed }: Encoding): string {
  const random = prng(seed);
  let out = text;
  for (let round = 0; round < rounds; round++) out = encodeOnce(out, share, hexCase, random);
  return out;
}

/** A well-formed key: `st_`, 32 to 194 base62 characters, its checksum. */
export const wellFormedKeys: fc.Arbitrary<string> = fc
  .array(fc.constantFrom(...BASE62), { minLength: 32, maxLength: 194 })
  .map((random) => withChecksum(`st_${random.join('')}`));

/** What a key may be glued to, before it. */
export const gluedBefore = fc.constantFrom(
  '',
  'req_',
  'trace1',
  'token=Bearer_',
  'Bearer ',
  'Bearer+',
  'X',
  'first_',
  'é',
  '%',
);

/** What a key may be glued to, after it. */
export const gluedAfter = fc.constantFrom('', 'x', '_1', 'more', '.', ':', '"', ' ', '%', 'é');
