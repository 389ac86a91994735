// Ports for the local brokers and the tests' servers: chosen below the kernel's ephemeral range, where no
// outgoing connection can take one while its server is down, and checked free before a server is started.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Resolves when nothing listens on 127.0.0.1:port; rejects with the listen error (EADDRINUSE) otherwise. */
export async function assertPortBindable(port: number, host = '127.0.0.1'): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, resolve);
  });
  await new Promise((resolve) => server.close(resolve));
}

/** The lowest port of the kernel's ephemeral range, from which outgoing connections take theirs. */
export function ephemeralPortsFrom(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST_CHOSEN_PORT ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const LOWEST_CHOSEN_PORT = 20_000;

/**
 * A base port with the `count` ports from it free now, all below the ephemeral range. A port from that
 * range (as binding port 0 gives) can be taken by any outgoing connection while its broker is down, and
 * a broker restarted on it then fails to bind: "Address already in use".
 */
export async function freePortRun(count: number): Promise<number> {
  const choices = Math.max(1, ephemeralPortsFrom() - count - LOWEST_CHOSEN_PORT);
  for (;;) {
    const base = LOWEST_CHOSEN_PORT + Math.floor(Math.random() * choices);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    const free = await Promise.all(
      ports.map((port) =>
        assertPortBindable(port).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (free.every(Boolean)) return base;
  }
}

/** A port nobody listens on now, below the ephemeral range (for a broker or a server of a test's own). */
export function freePort(): Promise<number> {
  return freePortRun(1);
}
