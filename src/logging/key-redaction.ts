/*
 * Key-shaped values out of everything the service writes or echoes: log lines, the error
 * envelope's `path` and messages. A key is `st_` + 32 to 194 base62 characters + a 6-character
 * checksum (src/auth/api-key.ts); a caller can send one in any part of a request, glued to other
 * text and percent-encoded in part or whole, once or several times (`s%74_...`, `%73t_...`,
 * `%2573t_...`, every byte encoded, in either case of hex). Each of these is found by reading the
 * text as it is and then percent-decoded again and again, and the whole span that encodes the key
 * is replaced in the text as written, so that no reader, whatever it decodes, finds the key.
 *
 * What counts as key-shaped, in the text or any of its decodings:
 * - `st_` starting a word (at the start, or after a character that is neither a letter, a digit
 *   nor `_`), up to the next delimiter of a URL, a header or a JSON string: a key, and also a key
 *   with a character mistyped (`-` for a letter), which is all but the key itself;
 * - `st_` followed by at least 32 letters and digits (a key's random part), wherever it is, glued
 *   to other text (`req_st_...`, `trace1st_...`, `Bearer_st_...`), again up to the next delimiter.
 * Ordinary text stays as written: `first_seen` has `st_` inside a word followed by 4 letters, a
 * percent-encoded path is only ever decoded to look, never rewritten unless a key is found in it.
 */

/**
 * What ends a key-shaped value: whitespace, quotes, the delimiters of URLs and headers, and `%`,
 * where the next round of decoding takes over (the value then ends where the decoded text says:
 * `st_...%26x` is cut at `&`, and redacting is idempotent).
 */
const UNTIL_DELIMITER = `[^\\s"'&#/\\\\,;=?%]*`;
const KEY_SHAPED = new RegExp(
  `(?<![A-Za-z0-9_])st_${UNTIL_DELIMITER}|st_(?=[A-Za-z0-9]{32})${UNTIL_DELIMITER}`,
  'g',
);
const PERCENT_ESCAPE = /%[0-7][0-9A-Fa-f]/;
const PERCENT_ESCAPES = new RegExp(PERCENT_ESCAPE.source, 'g');
export const REDACTED_KEY = 'st_[REDACTED]';

/*
 * Decoding stops after this many rounds: far more than any reader applies (a value encoded twice is
 * already a mistake), and a bound on the work a hostile line can cause (each round is linear in the
 * line's length, and `%252525...` needs one round per `25`).
 */
const MAX_DECODING_ROUNDS = 32;

/** A text and, for each of its characters, the span of the original text it was decoded from. */
interface Decoded {
  text: string;
  from: Int32Array;
  to: Int32Array;
}

/**
 * The text with every key-shaped value replaced by `st_[REDACTED]`, however it was encoded; the
 * rest exactly as written. Idempotent.
 */
export function redactApiKeys(text: string): string {
  if (!text.includes('%')) {
    // The common case, without decoding: only `st_` itself can start a key.
    return text.includes('st_') ? text.replace(KEY_SHAPED, REDACTED_KEY) : text;
  }
  if (!readings(text).some((reading) => reading.includes('st_'))) return text;
  const spans: [number, number][] = [];
  let level: Decoded | null = identity(text);
  for (let round = 0; level && round <= MAX_DECODING_ROUNDS; round++) {
    for (const match of level.text.matchAll(KEY_SHAPED)) {
      const last = match.index + match[0].length - 1;
      spans.push([level.from[match.index], level.to[last]]);
    }
    level = decodeOnce(level);
  }
  return spans.length === 0 ? text : replaceSpans(text, spans);
}

/** True when the text holds a key-shaped value, in any encoding. */
export function holdsApiKey(text: string): boolean {
  return redactApiKeys(text) !== text;
}

/**
 * The text and its decodings, without keeping where each character came from: the quick check of
 * whether a line needs the slower decoding below (most lines with `%` hold no key).
 */
function readings(text: string): string[] {
  const all = [text];
  for (let round = 0; round < MAX_DECODING_ROUNDS; round++) {
    const last = all[all.length - 1];
    const next = last.replace(PERCENT_ESCAPES, (escape) =>
      String.fromCharCode(parseInt(escape.slice(1), 16)),
    );
    if (next === last) break;
    all.push(next);
  }
  return all;
}

function identity(text: string): Decoded {
  const from = new Int32Array(text.length);
  const to = new Int32Array(text.length);
  for (let i = 0; i < text.length; i++) {
    from[i] = i;
    to[i] = i + 1;
  }
  return { text, from, to };
}

/**
 * One round of percent-decoding, lenient as readers are: each `%XX` of an ASCII character becomes
 * that character, anything else (a lone `%`, a non-ASCII byte's escape) stays as it is. Null when
 * there was nothing to decode. Only ASCII matters: a key is made of ASCII characters.
 */
function decodeOnce(level: Decoded): Decoded | null {
  const { text } = level;
  if (!PERCENT_ESCAPE.test(text)) return null;
  let decoded = '';
  const from = new Int32Array(text.length);
  const to = new Int32Array(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i) === 0x25 && i + 2 < text.length ? asciiEscape(text, i) : -1;
    if (code >= 0) {
      decoded += String.fromCharCode(code);
      from[length] = level.from[i];
      to[length] = level.to[i + 2];
      i += 2;
    } else {
      decoded += text[i];
      from[length] = level.from[i];
      to[length] = level.to[i];
    }
    length++;
  }
  return { text: decoded, from: from.subarray(0, length), to: to.subarray(0, length) };
}

/** The character `%XX` at `i` encodes when it is ASCII (00 to 7F), otherwise -1. */
function asciiEscape(text: string, i: number): number {
  const high = hexValue(text.charCodeAt(i + 1));
  const low = hexValue(text.charCodeAt(i + 2));
  return high >= 0 && high < 8 && low >= 0 ? high * 16 + low : -1;
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x41 + 10;
  if (code >= 0x61 && code <= 0x66) return code - 0x61 + 10;
  return -1;
}

/** The text with each span (merged where they overlap or touch) replaced by the marker. */
function replaceSpans(text: string, spans: [number, number][]): string {
  spans.sort((a, b) => a[0] - b[0]);
  let result = '';
  let written = 0;
  let [start, end] = spans[0];
  for (const [from, to] of spans.slice(1)) {
    if (from <= end) {
      end = Math.max(end, to);
      continue;
    }
    result += text.slice(written, start) + REDACTED_KEY;
    written = end;
    [start, end] = [from, to];
  }
  return result + text.slice(written, start) + REDACTED_KEY + text.slice(end);
}
