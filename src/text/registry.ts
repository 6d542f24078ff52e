// Named parts, each one entry: the condenser's tokenizers and normalizers (text/), its token hashes
// (sketch/) and the presets. An entry carries its name, its aliases, its function and its fast path if it
// has one, so that the spec parser, the signer and the kernels look a part up instead of each matching
// names of its own. It sits in text/, the lowest layer, because every one of those can import from here.

/** What every entry has: the name a condenser spec and the params keyword write, and other names it answers to. */
export interface Named {
  readonly name: string;
  readonly aliases?: readonly string[];
}

/** The entries of one kind of part, by name and by alias, in the order they were added. */
export class Registry<T extends Named> {
  /** Canonical names, in the order added (a live list: an entry added later is in it). */
  readonly names: string[] = [];
  /** Alias -> canonical name (live, as `names`). */
  readonly aliases: Record<string, string> = {};
  private readonly byName = new Map<string, T>();

  /** `kinds` names them in messages: "valid tokenizers: ...". */
  constructor(
    readonly kinds: string,
    entries: Iterable<T> = [],
  ) {
    for (const entry of entries) this.add(entry);
  }

  /** Adds an entry; one with a name or alias that is taken already is refused whole (RangeError). */
  add(entry: T): T {
    const names = [entry.name, ...(entry.aliases ?? [])];
    const taken = names.find((name, i) => this.byName.has(name) || names.indexOf(name) !== i);
    if (taken !== undefined) throw new RangeError(`there is already one of the ${this.kinds} named "${taken}"`);
    for (const name of names) this.byName.set(name, entry);
    this.names.push(entry.name);
    for (const alias of entry.aliases ?? []) this.aliases[alias] = entry.name;
    return entry;
  }

  /** The entry of a name or alias, or undefined. */
  get(name: string): T | undefined {
    return this.byName.get(name);
  }

  /** Every entry, in the order added. */
  entries(): T[] {
    return this.names.map((name) => this.byName.get(name)!);
  }

  /** For a message: "valid tokenizers: white-space, ..., ws (= white-space)". */
  valid(): string {
    const aliases = Object.entries(this.aliases).map(([alias, name]) => `${alias} (= ${name})`);
    return `valid ${this.kinds}: ${[...this.names, ...aliases].join(', ')}`;
  }
}
