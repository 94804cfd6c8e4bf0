import express from 'express';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { compressJsonAnswers, negotiateEncoding } from './compression';

describe('negotiateEncoding', () => {
  it.each([
    // Nothing asked: plain.
    [undefined, 'identity'],
    ['', 'identity'],
    ['identity', 'identity'],
    // One coding, in any case and spelling.
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['GZIP', 'gzip'],
    ['x-gzip', 'gzip'],
    // Both alike: br, smaller and faster at the levels chosen.
    ['gzip, br', 'br'],
    ['br, gzip', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['*', 'br'],
    // Weights decide.
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0.5, gzip;q=0.9', 'gzip'],
    ['br;q=0.001, gzip;q=0.002', 'gzip'],
    [' gzip ; q=0.8 , br ; q = 0.9', 'br'],
    ['gzip;q=1.0, br;q=1.000', 'br'],
    ['gzip;Q=0.7, br;q=0.6', 'gzip'],
    // identity is acceptable unless refused, and wins when weighted above the others.
    ['gzip;q=0.5, identity', 'identity'],
    ['gzip, identity;q=0', 'gzip'],
    ['br;q=0.4, identity;q=0.5', 'identity'],
    // `*` stands for what is not named.
    ['*;q=0', 'identity'],
    ['*;q=0, gzip', 'gzip'],
    ['br;q=0, *', 'gzip'],
    ['br;q=0, gzip;q=0, *', 'identity'],
    // Refused or unknown codings: plain, even when identity is refused too.
    ['gzip;q=0', 'identity'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['identity;q=0, gzip;q=0, br;q=0', 'identity'],
    ['*;q=0, identity;q=0', 'identity'],
    ['deflate', 'identity'],
    ['zstd, compress', 'identity'],
    // Malformed entries are ignored, the rest read.
    ['gzip;q=1.5', 'identity'],
    ['gzip;q=abc, br', 'br'],
    ['br;q=0.5;x=1, gzip;q=0.1', 'gzip'],
    [',,gzip,,', 'gzip'],
    ['gzip;q=0.1234', 'identity'],
  ])('%j: %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });
});

describe('compressJsonAnswers: a JSON text answered as it is', () => {
  // A page's text: over the compression threshold, not all ASCII (as names and addresses are).
  const page = JSON.stringify({ data: Array.from({ length: 40 }, (_, i) => `Société n° ${i}`) });

  async function answer(method: 'GET' | 'HEAD'): Promise<{ response: Response; measured: number }> {
    const app = express();
    compressJsonAnswers(app);
    app.get('/page', (_request, response) => {
      response.type('application/json; charset=utf-8').send(page);
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const byteLength = jest.spyOn(Buffer, 'byteLength');
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/page`, { method });
      const measured = byteLength.mock.calls.filter(([text]) => text === page).length;
      return { response, measured };
    } finally {
      byteLength.mockRestore();
      server.close();
    }
  }

  it("measures the text's UTF-8 length once, for its Content-Length, and writes the text", async () => {
    const { response, measured } = await answer('GET');
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(page)));
    expect(Buffer.byteLength(page)).toBeGreaterThan(page.length);
    expect(await response.text()).toBe(page);
    expect(measured).toBe(1);
  });

  it('answers HEAD with the same length and no body', async () => {
    const { response } = await answer('HEAD');
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(page)));
    expect(await response.text()).toBe('');
  });
});
