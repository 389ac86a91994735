// Storing a batch in which the database may refuse a command for its data. A refused command fails its
// whole statement, and retrying that statement would hold up its partitions forever; so once a statement
// is refused, the batch's commands are stored one by one and only the refused ones are set aside.
import type { HandledCommand, StoreOutcome } from './reply-builder';

export interface RefusalIsolationOptions<C> {
  /** Stores commands and answers one result per command, in order. */
  store: (commands: C[]) => Promise<HandledCommand[]>;
  /** True when the store failed for the data of a command; any other failure is an outage, rethrown. */
  isRefusal: (error: unknown) => boolean;
}

export async function storeIsolatingRefusals<C>(
  commands: C[],
  storeTogether: (commands: C[]) => Promise<HandledCommand[]>,
  options: RefusalIsolationOptions<C>,
): Promise<StoreOutcome[]> {
  try {
    return await storeTogether(commands);
  } catch (error) {
    if (!options.isRefusal(error)) throw error;
  }
  const outcomes: StoreOutcome[] = [];
  for (const command of commands) {
    try {
      outcomes.push(...(await options.store([command])));
    } catch (error) {
      if (!options.isRefusal(error)) throw error;
      outcomes.push({ refused: `refused by the database: ${(error as Error).message}` });
    }
  }
  return outcomes;
}
