import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorNameOf } from './all-exceptions.filter';
import type { ErrorEnvelopeDto } from './error-envelope.dto';

// The statuses Node itself gives to what its HTTP parser refuses; anything else is a 400.
const STATUS_BY_CODE: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431, // headers, request line included, over --max-http-header-size (16 KiB)
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/** What Node's HTTP server sets on a socket while a response is in flight on it. */
interface InFlight {
  _httpMessage?: { headersSent?: boolean } | null;
}

const logger = new Logger('HttpParser');

/**
 * Requests that Node's HTTP parser refuses (bytes not allowed in a request line or header,
 * oversized headers, a method token HTTP does not know, conflicting lengths) never reach the
 * application: Node answers them with a bare status line. This answers them with the contract's
 * envelope and headers instead, then closes the connection, whose parser state is lost. `path` is
 * empty: the request could not be read, so there is no path to repeat.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex & InFlight) => {
    // As Node does: nothing to say to a peer that is gone, nor in the middle of a response.
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const status = STATUS_BY_CODE[error.code ?? ''] ?? 400;
    const reason = STATUS_CODES[status] ?? 'Bad Request';
    const requestId = randomUUID();
    const envelope: ErrorEnvelopeDto = {
      statusCode: status,
      message: reason,
      error: errorNameOf(status),
      path: '',
      timestamp: new Date().toISOString(),
    };
    const body = JSON.stringify(envelope);
    logger.warn(`Refused a request the HTTP parser could not read (${error.code}) [${requestId}]`);
    socket.end(
      [
        `HTTP/1.1 ${status} ${reason}`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Cache-Control: no-store',
        'Vary: Accept-Encoding',
        'X-Content-Type-Options: nosniff',
        `X-Request-Id: ${requestId}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
      () => socket.destroy(),
    );
  });
}

/**
 * A request whose `Expect` is not `100-continue`: Node answers it a bare 417 by itself, without
 * the envelope, the headers or a log line, unless the server takes the request. This API reads no
 * request body, so no expectation changes what it does: the request is served like any other (a
 * server MAY answer 417 to an expectation it cannot meet, RFC 9110, 10.1.1; it need not).
 */
export function serveAnyExpectation(server: Server): void {
  server.on('checkExpectation', (request, response) => server.emit('request', request, response));
}
