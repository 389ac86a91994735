import { eventually } from './eventually';
import { timeLeft } from './deadline';

test("a wait with a bound longer than the test's time ends at the test's deadline, naming what it waited for", async () => {
  await expect(eventually(() => false, 60_000, { what: 'a thing that never happens' })).rejects.toThrow(
    "timed out at the test's deadline waiting for a thing that never happens",
  );
  // Had it waited out its own bound, jest's timeout of 2 s would have failed the test first.
}, 2000);

test('a wait with a bound shorter than what is left keeps its own bound, and says so', async () => {
  await expect(eventually(() => false, 100, { what: 'a quick thing' })).rejects.toThrow('timed out after 100 ms waiting for a quick thing');
  expect(timeLeft()).toBeGreaterThan(1000);
}, 10_000);

test("a failed check's own error is thrown, prefixed with what was awaited", async () => {
  await expect(
    eventually(
      () => {
        throw new Error('connection refused');
      },
      100,
      { what: 'the server' },
    ),
  ).rejects.toThrow('after 100 ms, waiting for the server: connection refused');
});
