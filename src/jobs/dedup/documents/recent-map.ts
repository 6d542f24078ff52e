// A bounded map for the signature cache: memory does not grow with the index.

/**
 * A Map that holds at most `capacity` entries and forgets the ones not used for longest: two generations,
 * each of half the capacity; a hit in the older one moves the entry to the newer one, and when the newer
 * one is full it becomes the older one. A hit in the newer generation costs one lookup and no write.
 */
export class RecentMap<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();
  private readonly half: number;
  constructor(capacity: number) {
    this.half = Math.max(1, Math.floor(capacity / 2));
  }
  get size(): number {
    return this.current.size + this.previous.size;
  }
  get(key: K): V | undefined {
    const value = this.current.get(key);
    if (value !== undefined) return value;
    const older = this.previous.get(key);
    if (older !== undefined) {
      this.previous.delete(key);
      this.set(key, older);
    }
    return older;
  }
  set(key: K, value: V): void {
    this.previous.delete(key);
    this.current.set(key, value);
    if (this.current.size >= this.half) {
      this.previous = this.current;
      this.current = new Map();
    }
  }
}
