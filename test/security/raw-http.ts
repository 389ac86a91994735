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
