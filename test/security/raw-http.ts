// Requests written on a socket by hand, for what fetch refuses to send: control characters and
// repeated headers. Resolves with the status line of the answer.
import net from 'node:net';

export function rawRequest(port: number | string, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(request, 'latin1'));
    let answer = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n')) {
        socket.destroy();
        resolve(answer.slice(0, answer.indexOf('\r\n')));
      }
    });
    socket.on('error', reject);
  });
}

export interface RawAnswer {
  statusLine: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/** Writes the request and reads the whole answer, until the server closes the connection. */
export function rawExchange(port: number | string, request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(request, 'latin1'));
    let answer = '';
    socket.setTimeout(5000, () => socket.destroy(new Error(`no end of answer within 5 s: ${JSON.stringify(answer)}`)));
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('end', () => {
      const headEnd = answer.indexOf('\r\n\r\n');
      const [statusLine = '', ...fields] = answer.slice(0, headEnd).split('\r\n');
      const headers = Object.fromEntries(
        fields.map((field) => [field.slice(0, field.indexOf(':')).toLowerCase(), field.slice(field.indexOf(':') + 1).trim()]),
      );
      resolve({ statusLine, headers, body: answer.slice(headEnd + 4) });
    });
  });
}
