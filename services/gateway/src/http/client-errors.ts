// What the gateway answers a request Node's HTTP parser refuses before any route sees it (both
// Content-Length and Transfer-Encoding, a repeated Content-Length, a NUL in a header, a bare LF, a head
// too large or too slow): the status Node would send, with the usual JSON error body instead of none.
// And the one transfer coding the gateway reads: a body sent with another (gzip, chunked) is refused
// rather than read as if it were plain.
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, type ErrorKind } from '@fleet/shared/errors';
import { httpStatusOf } from './error-handler';
import type { Middleware } from './route-handler';

function kindOf(code: string | undefined): ErrorKind {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'headersTooLarge';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'requestTimeout';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'payloadTooLarge';
    default:
      return 'malformedHttp';
  }
}

/** The server's 'clientError' listener. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node's own handler: nothing is written to a socket that is gone, or on which a response has begun.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const answer = new AppError({ kind: kindOf(error.code) });
  const status = httpStatusOf(answer);
  const body = JSON.stringify(answer.toJSON());
  // Nothing more is read from this connection: a request whose body was cut short by the timeout must
  // not complete afterwards and be published, once it has been answered that it was not received.
  socket.pause();
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "X-Content-Type-Options: nosniff\r\nContent-Security-Policy: default-src 'none'\r\n" +
      `Connection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

/** Refuses 501 a body sent with a transfer coding other than chunked alone (RFC 9112 §6.1). */
export const refuseTransferCodings: Middleware = (req: IncomingMessage, res, next) => {
  const coding = req.headers['transfer-encoding'];
  if (coding === undefined || coding.trim().toLowerCase() === 'chunked') return next();
  // The body is left unread, so the connection cannot carry another request.
  res.setHeader('Connection', 'close');
  next(new AppError({ kind: 'transferCodingUnsupported', detail: 'the only transfer coding accepted is chunked alone' }));
};
