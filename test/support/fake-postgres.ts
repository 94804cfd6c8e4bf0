import { createServer, type Server, type Socket } from 'node:net';

/**
 * A stand-in for a PostgreSQL server of a version no machine here has (14, 19): it speaks just
 * enough of the protocol for a start's version check. It accepts any login, answers a simple
 * query with one row of `server_version_num` and `server_version` (what
 * src/database/server-version.ts asks), and answers any other statement with an error. `queries`
 * records what each session sent, in order.
 */
export interface FakePostgres {
  url: string;
  queries: string[];
  close(): Promise<void>;
}

export async function startFakePostgres(
  version: string,
  versionNumber: number,
): Promise<FakePostgres> {
  const queries: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    let started = false;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        // The startup message has no type byte; every later message has one.
        const offset = started ? 1 : 0;
        if (buffered.length < offset + 4) return;
        const length = buffered.readInt32BE(offset);
        if (buffered.length < offset + length) return;
        const type = started ? String.fromCharCode(buffered[0]) : '';
        const body = buffered.subarray(offset + 4, offset + length);
        buffered = buffered.subarray(offset + length);
        if (!started) {
          started = true;
          socket.write(
            Buffer.concat([
              message('R', int32(0)),
              message('S', cstring('server_version'), cstring(version)),
              message('S', cstring('client_encoding'), cstring('UTF8')),
              message('K', int32(1), int32(1)),
              ready(),
            ]),
          );
        } else if (type === 'Q') {
          const text = body.subarray(0, body.length - 1).toString();
          queries.push(text);
          socket.write(
            text.includes('server_version_num')
              ? Buffer.concat([
                  rowDescription(['number', 23], ['version', 25]),
                  dataRow(String(versionNumber), version),
                  message('C', cstring('SELECT 1')),
                  ready(),
                ])
              : Buffer.concat([notSupported(), ready()]),
          );
        } else if (type === 'P') {
          queries.push(
            body.subarray(body.indexOf(0) + 1, body.indexOf(0, body.indexOf(0) + 1)).toString(),
          );
        } else if (type === 'S') {
          socket.write(Buffer.concat([notSupported(), ready()]));
        } else if (type === 'X') {
          socket.end();
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/fake`,
    queries,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function int32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
}

function int16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeInt16BE(value);
  return buffer;
}

function cstring(text: string): Buffer {
  return Buffer.concat([Buffer.from(text), Buffer.from([0])]);
}

function message(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from(type), int32(body.length + 4), body]);
}

function ready(): Buffer {
  return message('Z', Buffer.from('I'));
}

function rowDescription(...columns: [string, number][]): Buffer {
  return message(
    'T',
    int16(columns.length),
    ...columns.map(([name, type]) =>
      Buffer.concat([
        cstring(name),
        int32(0),
        int16(0),
        int32(type),
        int16(-1),
        int32(-1),
        int16(0),
      ]),
    ),
  );
}

function dataRow(...values: string[]): Buffer {
  return message(
    'D',
    int16(values.length),
    ...values.map((value) => Buffer.concat([int32(Buffer.byteLength(value)), Buffer.from(value)])),
  );
}

/** feature_not_supported: what this stand-in says to any statement but the version's. */
function notSupported(): Buffer {
  return message(
    'E',
    cstring('SERROR'),
    cstring('C0A000'),
    cstring('Mnot supported by the fake server'),
    Buffer.from([0]),
  );
}
