// Each device's newest fix fit to use, as this writer last stored or read it: what the speed filter
// measures a new fix from (position-filters.ts), without asking PostgreSQL again for a device seen
// before. A device's commands reach one partition, and so one writer at a time: what the writer stored
// is what PostgreSQL holds until the group moves partitions, and then all of it is forgotten.
import { isNewer, type Fix } from './position-filters';

/**
 * Devices remembered at most, the least lately written forgotten first: about 3 MiB of heap when full,
 * a writer's share of a fleet of some 60,000 devices. Room for 100,000 (16 MiB) took the bench's
 * trip-writer, whose loads come from new devices, to a peak RSS of 175 MiB against 143 to 165 before.
 */
export const NEWEST_FIXES_REMEMBERED = 20_000;

export class NewestFixes {
  private readonly fixes = new Map<string, Fix>();
  private generation = 0;

  constructor(private readonly capacity = NEWEST_FIXES_REMEMBERED) {}

  /** The remembered fixes of those of `imeis` that have one. */
  of(imeis: Iterable<string>): Map<string, Fix> {
    const known = new Map<string, Fix>();
    for (const imei of imeis) {
      const fix = this.fixes.get(imei);
      if (fix) known.set(imei, fix);
    }
    return known;
  }

  /** Taken before a batch reads or stores fixes: `remember` drops them if everything was forgotten since. */
  mark(): number {
    return this.generation;
  }

  /** Keeps each fix newer than the one remembered for its device, unless `forgetAll` came after `mark`. */
  remember(fixes: ReadonlyMap<string, Fix>, mark: number): void {
    if (mark !== this.generation) return;
    for (const [imei, fix] of fixes) {
      if (!isNewer(fix, this.fixes.get(imei))) continue;
      // Written again, the device moves to the end of the map's order: the first key is the least lately written.
      this.fixes.delete(imei);
      this.fixes.set(imei, fix);
      if (this.fixes.size > this.capacity) this.fixes.delete(this.fixes.keys().next().value!);
    }
  }

  /** Forgets these devices: a batch of theirs failed, and what PostgreSQL holds is not known. */
  forget(imeis: Iterable<string>): void {
    for (const imei of imeis) this.fixes.delete(imei);
  }

  /** Forgets every device: the group moved partitions, and another writer may have stored their fixes since. */
  forgetAll(): void {
    this.fixes.clear();
    this.generation += 1;
  }
}
