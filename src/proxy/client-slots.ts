// Write slots per client address: one address holds at most this many of the proxy's write slots at once
// (its other writes wait behind its own, unread), so a few slow or greedy connections from one client
// cannot take every slot from the others, as reverse proxies limit connections per address. Everyone
// behind one NAT or one reverse proxy shares an address.
import PQueue from 'p-queue';

/** Write slots per client address: each address waits behind its own writes past `perClient`. */
export class ClientSlots {
  private readonly queues = new Map<string, PQueue>();

  constructor(readonly perClient: number) {}

  /** Runs `work` when `address` has a slot free; its queue is dropped once empty. */
  run<T>(address: string, work: () => Promise<T>): Promise<T> {
    let queue = this.queues.get(address);
    if (!queue) {
      const created = new PQueue({ concurrency: this.perClient });
      created.on('idle', () => {
        if (created.size === 0 && created.pending === 0 && this.queues.get(address) === created) this.queues.delete(address);
      });
      this.queues.set(address, created);
      queue = created;
    }
    return queue.add(work);
  }

  /** Addresses with writes running or waiting, for the counters. */
  get clients(): number {
    return this.queues.size;
  }
}
