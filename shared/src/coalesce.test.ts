import { coalesce } from './coalesce';

/**
 * A run that records the lists it was given and answers each item doubled. `started` settles when the
 * first run begins; every run waits for `hold` before answering.
 */
function recordingRun(options: { failWhen?: (items: number[]) => boolean; hold?: Promise<void> } = {}) {
  const runs: number[][] = [];
  let announce = () => {};
  const started = new Promise<void>((resolve) => (announce = resolve));
  const run = async (items: number[]) => {
    runs.push(items);
    announce();
    await options.hold;
    if (options.failWhen?.(items)) throw new Error('refused');
    return items.map((item) => item * 2);
  };
  return { runs, run, started };
}

describe('coalesce', () => {
  it('when callers arrive in the same turn, runs once over all items and gives each caller its own results', async () => {
    const { runs, run } = recordingRun();
    const together = coalesce(run);

    const answers = await Promise.all([together([1, 2]), together([3]), together([4, 5, 6])]);

    expect(runs).toEqual([[1, 2, 3, 4, 5, 6]]);
    expect(answers).toEqual([[2, 4], [6], [8, 10, 12]]);
  });

  it('when callers arrive while a run is in flight, serves them all with the next run', async () => {
    let release = () => {};
    const hold = new Promise<void>((resolve) => (release = resolve));
    const { runs, run, started } = recordingRun({ hold });
    const together = coalesce(run);

    const first = together([1]);
    await started;
    const later = [together([2]), together([3])];
    release();

    expect(await first).toEqual([2]);
    expect(await Promise.all(later)).toEqual([[4], [6]]);
    expect(runs).toEqual([[1], [2, 3]]);
  });

  it('when the run fails, rejects every caller of that run and serves later callers afresh', async () => {
    const { runs, run } = recordingRun({ failWhen: (items) => items.includes(13) });
    const together = coalesce(run);

    const results = await Promise.allSettled([together([1]), together([13])]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);

    await expect(together([7])).resolves.toEqual([14]);
    expect(runs).toEqual([[1, 13], [7]]);
  });

  it('when a caller has no items, answers at once without running', async () => {
    const { runs, run } = recordingRun();
    await expect(coalesce(run)([])).resolves.toEqual([]);
    expect(runs).toEqual([]);
  });
});
