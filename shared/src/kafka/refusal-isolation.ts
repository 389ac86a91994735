// Storing a batch in which the database may refuse a command for its data, or fail a statement for good.
// A refused command fails its whole statement, and retrying that statement would hold up its partitions
// forever; so once a statement is refused, the batch's commands are stored one by one and only the
// refused ones are set aside. A statement that keeps failing for a reason other than its data (out of
// shared memory, a program limit: errors no retry of the same statement is known to fix) is split the
// same way once the consumer has seen it fail several times: commands that store alone are stored, and
// one that fails alone is set aside too, instead of stalling every device behind it.
import type { HandledCommand, StoreOutcome } from './reply-builder';

export interface RefusalIsolationOptions<C> {
  /** Stores commands and answers one result per command, in order. */
  store: (commands: C[]) => Promise<HandledCommand[]>;
  /** True when the store failed for the data of a command; any other failure is an outage, rethrown. */
  isRefusal: (error: unknown) => boolean;
  /** True when the database answered the statement with an error that retrying it is not known to fix. */
  isStatementFailure: (error: unknown) => boolean;
}

/**
 * `together`: the batch in one statement first, one by one only after a refusal. `one-by-one`: the batch
 * has failed together before; each command is stored alone, and one failing alone for good is set aside.
 */
export type IsolationMode = 'together' | 'one-by-one';

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export async function storeIsolatingRefusals<C>(
  commands: C[],
  storeTogether: (commands: C[]) => Promise<HandledCommand[]>,
  options: RefusalIsolationOptions<C>,
  mode: IsolationMode = 'together',
): Promise<StoreOutcome[]> {
  if (mode === 'together') {
    try {
      return await storeTogether(commands);
    } catch (error) {
      if (!options.isRefusal(error)) throw error;
    }
  }
  const outcomes: StoreOutcome[] = [];
  for (const command of commands) {
    try {
      outcomes.push(...(await options.store([command])));
    } catch (error) {
      if (options.isRefusal(error)) {
        outcomes.push({ refused: `refused by the database: ${messageOf(error)}`, fault: 'data' });
      } else if (mode === 'one-by-one' && options.isStatementFailure(error)) {
        outcomes.push({ refused: `failed alone as in its batch: ${messageOf(error)}`, fault: 'store' });
      } else {
        throw error;
      }
    }
  }
  return outcomes;
}
