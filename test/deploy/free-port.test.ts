import { assertPortBindable, ephemeralPortsFrom, freePort, freePortRun } from '../../deploy/local/src/local-ports';

describe('ports chosen for brokers and test servers', () => {
  test('lie below the ephemeral range, where no outgoing connection takes them while a broker restarts', async () => {
    const ephemeral = ephemeralPortsFrom();
    for (let i = 0; i < 20; i += 1) {
      const base = await freePortRun(6);
      expect(base).toBeGreaterThanOrEqual(20_000);
      expect(base + 5).toBeLessThan(ephemeral);
      expect(await freePort()).toBeLessThan(ephemeral);
    }
  });

  test('are free when chosen', async () => {
    const base = await freePortRun(3);
    for (const port of [base, base + 1, base + 2]) await expect(assertPortBindable(port)).resolves.toBeUndefined();
  });
});
