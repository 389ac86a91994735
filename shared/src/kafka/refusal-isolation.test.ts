import { storeIsolatingRefusals } from './refusal-isolation';

class Refusal extends Error {}
class StatementFailure extends Error {}

/** A store that refuses the values given, and records each call's commands. */
function store(refused: number[], outage = false) {
  const calls: number[][] = [];
  const run = async (commands: number[]) => {
    calls.push(commands);
    if (outage) throw new Error('connection terminated');
    if (commands.some((value) => refused.includes(value))) throw new Refusal(`refused ${commands}`);
    return commands.map((value) => ({ id: value, information: `stored ${value}`, duplicate: false }));
  };
  return { calls, run };
}

const isRefusal = (error: unknown) => error instanceof Refusal;
const isStatementFailure = (error: unknown) => error instanceof StatementFailure;

describe('storeIsolatingRefusals', () => {
  it('stores a batch the database accepts with one call', async () => {
    const { calls, run } = store([]);
    const outcomes = await storeIsolatingRefusals([1, 2], run, { store: run, isRefusal, isStatementFailure });
    expect(calls).toEqual([[1, 2]]);
    expect(outcomes.map((outcome) => ('id' in outcome ? outcome.id : 'refused'))).toEqual([1, 2]);
  });

  it('when one command is refused, stores the others one by one and marks only that one refused', async () => {
    const { calls, run } = store([2]);
    const outcomes = await storeIsolatingRefusals([1, 2, 3], run, { store: run, isRefusal, isStatementFailure });
    expect(calls).toEqual([[1, 2, 3], [1], [2], [3]]);
    expect(outcomes).toEqual([
      { id: 1, information: 'stored 1', duplicate: false },
      { refused: 'refused by the database: refused 2', fault: 'data' },
      { id: 3, information: 'stored 3', duplicate: false },
    ]);
  });

  it('when the database is down, rethrows so that the batch is retried', async () => {
    const { run } = store([], true);
    await expect(storeIsolatingRefusals([1], run, { store: run, isRefusal, isStatementFailure })).rejects.toThrow('connection terminated');
  });

  it('one by one, stores what stores alone and sets aside, as a store fault, a command that fails alone for good', async () => {
    const calls: number[][] = [];
    const run = async (commands: number[]) => {
      calls.push(commands);
      if (commands.length > 1 || commands[0] === 2) throw new StatementFailure('out of shared memory');
      return commands.map((value) => ({ id: value, information: `stored ${value}`, duplicate: false }));
    };
    await expect(storeIsolatingRefusals([1, 2, 3], run, { store: run, isRefusal, isStatementFailure })).rejects.toThrow(
      'out of shared memory',
    );
    const outcomes = await storeIsolatingRefusals([1, 2, 3], run, { store: run, isRefusal, isStatementFailure }, 'one-by-one');
    expect(calls).toEqual([[1, 2, 3], [1], [2], [3]]);
    expect(outcomes).toEqual([
      { id: 1, information: 'stored 1', duplicate: false },
      { refused: 'failed alone as in its batch: out of shared memory', fault: 'store' },
      { id: 3, information: 'stored 3', duplicate: false },
    ]);
  });

  it('one by one, still rethrows an outage, so that nothing is set aside while the database is away', async () => {
    const { run } = store([], true);
    await expect(storeIsolatingRefusals([1, 2], run, { store: run, isRefusal, isStatementFailure }, 'one-by-one')).rejects.toThrow(
      'connection terminated',
    );
  });
});
