// A TCP server that accepts connections and answers nothing: a frozen node as a client sees it. Closing
// it also ends the connections it accepted. Node reads nothing from a socket with no reader, so such a
// socket never sees its client go away, and one left open keeps the test worker from exiting.
import net from 'node:net';

export interface SilentServer {
  /** `127.0.0.1:<port>`, as a broker list names it. */
  address: string;
  close(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const accepted = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    accepted.add(socket);
    socket.once('close', () => accepted.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of accepted) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
