/**
 * Results of slow work (rasterising) by key, the most recently used few kept. A failed result is
 * forgotten, so the next call tries again.
 */
export class RecentPromises<T> {
  private readonly entries = new Map<string, Promise<T>>();

  constructor(private readonly kept: number) {}

  get(key: string, make: () => Promise<T>): Promise<T> {
    let entry = this.entries.get(key);
    if (entry) {
      // Most recently used goes last, so the first entry is the one to evict.
      this.entries.delete(key);
    } else {
      const made = make();
      made.catch(() => {
        if (this.entries.get(key) === made) this.entries.delete(key);
      });
      entry = made;
    }
    this.entries.set(key, entry);
    if (this.entries.size > this.kept) this.entries.delete(this.entries.keys().next().value as string);
    return entry;
  }
}
