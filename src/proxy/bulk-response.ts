// The answer to a client's _bulk when the proxy sent it upstream in parts, or answered some items itself:
// the engine's items in the client's order, with each refused document answered in its place as the engine
// answers a document it refuses (status 400 and a reason).
export interface RefusedItem {
  position: number;
  verb: string;
  index?: string;
  id?: string;
  reason: string;
}

/** A bulk answer as the proxy passes it on, fields it does not know kept as the engine sent them. */
export interface BulkAnswer {
  took?: number;
  ingest_took?: number;
  errors?: boolean;
  items?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

/** The error type of a document the proxy refused to sign, so that a client can tell it from the engine's refusals. */
export const REFUSAL_TYPE = 'near_dup_signing_exception';

/**
 * The item answered in place of a document the proxy refused, shaped as the engine answers one it refuses (status 400
 * and a reason).
 */
export function refusalItem(refused: RefusedItem): Record<string, unknown> {
  return {
    [refused.verb]: {
      _index: refused.index ?? null,
      _id: refused.id ?? null,
      status: 400,
      error: { type: REFUSAL_TYPE, reason: refused.reason },
    },
  };
}

/** A part the engine refused as a whole, as the answer of its items (and of those never sent after it): each with the part's status and error. */
export function notAppliedAnswer(status: number, text: string, items: ReadonlyArray<{ verb: string; index?: string; id?: string }>): BulkAnswer {
  const error = engineError(text) ?? { type: 'near_dup_upstream_exception', reason: `the cluster answered ${status}: ${text.slice(0, 200)}` };
  return {
    took: 0,
    errors: true,
    items: items.map((item) => ({ [item.verb]: { _index: item.index ?? null, _id: item.id ?? null, status, error } })),
  };
}

/** The error object of an engine's error answer (type and reason, without the root causes), if it is one. */
function engineError(text: string): Record<string, unknown> | undefined {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    if (typeof error !== 'object' || error === null) return undefined;
    const { root_cause: _, ...rest } = error as Record<string, unknown>;
    return rest;
  } catch {
    return undefined;
  }
}

/** The engine's answers to the parts, joined, with the refused items put back where they were. */
export function mergeBulkAnswers(parts: readonly BulkAnswer[], refused: readonly RefusedItem[]): BulkAnswer {
  return runToEnd(mergeSteps(parts, refused, new Turns(Number.POSITIVE_INFINITY)));
}

/**
 * The text of the answer to a client's _bulk: the parts' answers joined (mergeBulkAnswers), filter_path
 * applied when there is one (applyFilterPath; nothing left is `{}`), as JSON. The same text as
 * JSON.stringify(applyFilterPath(mergeBulkAnswers(parts, refused), filterPath) ?? {}), made without holding
 * the event loop: every step (joining, filtering, writing) gives it a turn (setImmediate) after each
 * `itemsPerTurn` items, so a large answer costs the proxy's other requests a few milliseconds at a time.
 */
export async function bulkAnswerText(parts: readonly BulkAnswer[], refused: readonly RefusedItem[], filterPath: string | null, itemsPerTurn = 1000): Promise<string> {
  return (await bulkAnswerChunks(parts, refused, filterPath, itemsPerTurn)).join('');
}

/**
 * bulkAnswerText as the pieces that make it up (about a turn's items each), to be written one after the
 * other: a large answer is then never held twice, as one string and as its copy.
 */
export async function bulkAnswerChunks(parts: readonly BulkAnswer[], refused: readonly RefusedItem[], filterPath: string | null, itemsPerTurn = 1000): Promise<string[]> {
  const steps = answerTextSteps(parts, refused, filterPath, new Turns(itemsPerTurn));
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Counts items of work, and says when a turn is over (a generator yields then). */
class Turns {
  private left: number;
  constructor(private readonly itemsPerTurn: number) {
    this.left = itemsPerTurn;
  }

  /** One more item done: true when the turn is over. */
  done(): boolean {
    if (--this.left > 0) return false;
    this.left = this.itemsPerTurn;
    return true;
  }
}

function runToEnd<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

function* answerTextSteps(parts: readonly BulkAnswer[], refused: readonly RefusedItem[], filterPath: string | null, turns: Turns): Generator<void, string[]> {
  const merged = yield* mergeSteps(parts, refused, turns);
  const filtered = filterPath === null ? merged : ((yield* filterSteps(merged, compileFilterPath(filterPath), turns)) ?? {});
  return yield* stringifySteps(filtered, turns);
}

function* mergeSteps(parts: readonly BulkAnswer[], refused: readonly RefusedItem[], turns: Turns): Generator<void, BulkAnswer> {
  const order = [...refused].sort((a, b) => a.position - b.position);
  const items: Array<Record<string, unknown>> = [];
  let r = 0;
  // Each refused item goes where its position says, or after all the engine's items if there are not that many.
  for (const part of parts) {
    for (const item of part.items ?? []) {
      while (r < order.length && order[r].position <= items.length) items.push(refusalItem(order[r++]));
      items.push(item);
      if (turns.done()) yield;
    }
  }
  while (r < order.length) items.push(refusalItem(order[r++]));
  const merged: BulkAnswer = {
    ...parts[parts.length - 1],
    took: parts.reduce((sum, p) => sum + (p.took ?? 0), 0),
    errors: refused.length > 0 || parts.some((p) => p.errors === true),
    items,
  };
  if (parts.some((p) => p.ingest_took !== undefined)) merged.ingest_took = parts.reduce((sum, p) => sum + (p.ingest_took ?? 0), 0);
  return merged;
}

/** JSON.stringify of a value, an object's array values written element by element (with turns). */
function* stringifySteps(value: unknown, turns: Turns): Generator<void, string[]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [JSON.stringify(value)];
  // Pieces joined a turn at a time: a few strings for the whole answer, not one per item.
  const chunks: string[] = [];
  let out: string[] = [];
  const flush = () => {
    chunks.push(out.join(''));
    out = [];
  };
  let first = true;
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    const head = `${first ? '{' : ','}${JSON.stringify(key)}:`;
    if (Array.isArray(v)) {
      first = false;
      out.push(`${head}[`);
      for (let i = 0; i < v.length; i++) {
        out.push(`${i > 0 ? ',' : ''}${JSON.stringify(v[i]) ?? 'null'}`);
        if (turns.done()) {
          flush();
          yield;
        }
      }
      out.push(']');
    } else {
      const text = JSON.stringify(v);
      if (text === undefined) continue; // undefined (and functions) are left out, as JSON.stringify does
      first = false;
      out.push(head + text);
    }
  }
  if (first) return ['{}'];
  out.push('}');
  flush();
  return chunks;
}

// filter_path, as the engines read it: comma-separated paths, `*` within a name, `**` for any depth, a
// leading `-` to leave a path out. Arrays are walked through. Used when the proxy writes the answer itself.
//
// The paths are compiled once into a tree of names (paths with the same start share it), and the value is
// walked with the set of places in that tree its keys have reached: a key of an object is looked up by name
// in each place (a glob is tested once per place and key), and the set a key leads to from a set is
// remembered, so the keys that repeat in every item of a bulk answer cost a lookup. The work is linear in
// the size of the value and of the paths, where testing every path at every key cost their product.

/** The answer with only what `filter_path` keeps, as the engine would have filtered it. */
export function applyFilterPath(value: unknown, filterPath: string): unknown {
  const filter = compileFilterPath(filterPath);
  return runToEnd(filterSteps(value, filter, new Turns(Number.POSITIVE_INFINITY)));
}

/** The paths as a tree of names: each node is a place after some names of a path. */
class PathNode {
  /** A path ends here: what is below is taken (or left out) whole. */
  end = false;
  readonly names = new Map<string, PathNode>();
  readonly globs: Array<{ glob: Glob; next: PathNode }> = [];
  /** The place after a `**`. */
  anyDepth?: PathNode;
  constructor(readonly id: number) {}

  hasNames(): boolean {
    return this.names.size > 0 || this.globs.length > 0;
  }
}

/** A name with `*` in it: any run of characters but line breaks (as the regular expression it once was). */
class Glob {
  private readonly pieces: string[];
  private regex?: RegExp;
  constructor(readonly text: string) {
    this.pieces = text.split('*');
  }

  matches(name: string): boolean {
    if (LINE_BREAK.test(name)) {
      this.regex ??= new RegExp(`^${this.pieces.map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
      return this.regex.test(name);
    }
    // Without line breaks, `*` matches anything: the first piece starts the name, the last ends it, and each
    // piece between is taken where it first comes (as far left as it can be, leaving the most for the rest).
    const { pieces } = this;
    const first = pieces[0], last = pieces[pieces.length - 1];
    if (name.length < first.length + last.length || !name.startsWith(first) || !name.endsWith(last)) return false;
    const end = name.length - last.length;
    let at = first.length;
    for (let i = 1; i < pieces.length - 1; i++) {
      const found = name.indexOf(pieces[i], at);
      if (found === -1 || found + pieces[i].length > end) return false;
      at = found + pieces[i].length;
    }
    return true;
  }
}
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * Where the keys from the root to a value have led: `names` (places whose next name is to be matched), `deep`
 * (places after a `**`, which match at any depth) and `complete` (a path ended: the value is taken whole).
 * Built once per distinct set; `next` remembers where each key leads.
 */
class FilterState {
  private readonly moves = new Map<string, FilterState>();
  constructor(
    private readonly filter: CompiledFilter,
    readonly names: readonly PathNode[],
    readonly deep: readonly PathNode[],
    readonly complete: boolean,
  ) {}

  /** No path goes on below: the key is not taken (includes) or taken as it is (excludes). */
  get empty(): boolean {
    return !this.complete && this.names.length === 0 && this.deep.length === 0;
  }

  next(key: string): FilterState {
    let state = this.moves.get(key);
    if (state === undefined) {
      state = this.filter.move(this, key);
      if (this.moves.size < MAX_REMEMBERED_KEYS) this.moves.set(key, state);
    }
    return state;
  }
}
/** Keys remembered per state: a value with more distinct keys than that has them matched each time. */
const MAX_REMEMBERED_KEYS = 4096;

class CompiledFilter {
  private nodes = 0;
  private readonly states = new Map<string, FilterState>();
  readonly includes?: FilterState;
  readonly excludes?: FilterState;

  constructor(filterPath: string) {
    const filters = filterPath.split(',').map((f) => f.trim()).filter(Boolean);
    const includes = filters.filter((f) => !f.startsWith('-')).map((f) => f.split('.'));
    const excludes = filters.filter((f) => f.startsWith('-')).map((f) => f.slice(1).split('.'));
    if (includes.length > 0) this.includes = this.start(includes);
    if (excludes.length > 0) this.excludes = this.start(excludes);
  }

  private start(paths: readonly string[][]): FilterState {
    const root = new PathNode(this.nodes++);
    const globs = new Map<PathNode, Map<string, PathNode>>();
    for (const path of paths) {
      let node = root;
      for (const name of path) {
        if (name === '**') node = node.anyDepth ??= new PathNode(this.nodes++);
        else if (name.includes('*')) {
          const byText = globs.get(node) ?? new Map<string, PathNode>();
          globs.set(node, byText);
          let next = byText.get(name);
          if (next === undefined) {
            next = new PathNode(this.nodes++);
            byText.set(name, next);
            node.globs.push({ glob: new Glob(name), next });
          }
          node = next;
        } else {
          let next = node.names.get(name);
          if (next === undefined) node.names.set(name, (next = new PathNode(this.nodes++)));
          node = next;
        }
      }
      node.end = true;
    }
    const into = new StateBuilder();
    into.enter(root);
    return this.state(into);
  }

  /** Where `key` leads from `from`. */
  move(from: FilterState, key: string): FilterState {
    const into = new StateBuilder();
    for (const node of from.names) into.matchNames(node, key);
    for (const node of from.deep) {
      into.addDeep(node); // a `**` goes on matching deeper
      if (node.end) into.complete = true;
      into.matchNames(node, key);
      // A `**` right after a `**` is read as a name: `*` twice, which any key without a line break matches.
      if (node.anyDepth && !LINE_BREAK.test(key)) into.enter(node.anyDepth);
    }
    return this.state(into);
  }

  private state(built: StateBuilder): FilterState {
    const names = [...built.names.values()].sort((a, b) => a.id - b.id);
    const deep = [...built.deep.values()].sort((a, b) => a.id - b.id);
    const key = `${built.complete ? 'c' : ''}${names.map((n) => n.id).join(',')}|${deep.map((n) => n.id).join(',')}`;
    let state = this.states.get(key);
    if (state === undefined) this.states.set(key, (state = new FilterState(this, names, deep, built.complete)));
    return state;
  }
}

class StateBuilder {
  readonly names = new Set<PathNode>();
  readonly deep = new Set<PathNode>();
  complete = false;

  /** The key reached `node`: its path ends there, or goes on by a name, or by a `**`. */
  enter(node: PathNode): void {
    if (node.end) this.complete = true;
    if (node.hasNames()) this.names.add(node);
    if (node.anyDepth) this.addDeep(node.anyDepth);
  }

  addDeep(node: PathNode): void {
    this.deep.add(node);
  }

  matchNames(node: PathNode, key: string): void {
    const named = node.names.get(key);
    if (named) this.enter(named);
    for (const { glob, next } of node.globs) if (glob.matches(key)) this.enter(next);
  }
}

function compileFilterPath(filterPath: string): CompiledFilter {
  return new CompiledFilter(filterPath);
}

function* filterSteps(value: unknown, filter: CompiledFilter, turns: Turns): Generator<void, unknown> {
  const kept = filter.includes ? yield* keepSteps(value, filter.includes, turns) : value;
  return filter.excludes && kept !== undefined ? yield* dropSteps(kept, filter.excludes, turns) : kept;
}

/** keep() of a value, an object's array values element by element (with turns). */
function* keepSteps(value: unknown, state: FilterState, turns: Turns): Generator<void, unknown> {
  if (state.complete || typeof value !== 'object' || value === null || Array.isArray(value)) return keep(value, state);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const next = state.next(key);
    if (next.empty) continue;
    let kept: unknown;
    if (Array.isArray(v) && !next.complete) {
      const list: unknown[] = [];
      for (const element of v) {
        const k = keep(element, next);
        if (k !== undefined) list.push(k);
        if (turns.done()) yield;
      }
      kept = list.length > 0 ? list : undefined;
    } else kept = keep(v, next);
    if (kept !== undefined) out[key] = kept;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** drop() of a value, an object's array values element by element (with turns). */
function* dropSteps(value: unknown, state: FilterState, turns: Turns): Generator<void, unknown> {
  if (state.complete || typeof value !== 'object' || value === null || Array.isArray(value)) return drop(value, state);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const next = state.next(key);
    let left: unknown;
    if (next.empty) left = v;
    else if (Array.isArray(v) && !next.complete) {
      const list: unknown[] = [];
      for (const element of v) {
        const d = drop(element, next);
        if (d !== undefined) list.push(d);
        if (turns.done()) yield;
      }
      left = list;
    } else left = drop(v, next);
    if (left !== undefined) out[key] = left;
  }
  return out;
}

/** What the paths take of a value (undefined: nothing). */
function keep(value: unknown, state: FilterState): unknown {
  if (state.complete) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) {
      const kept = keep(v, state);
      if (kept !== undefined) out.push(kept);
    }
    return out.length > 0 ? out : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const next = state.next(key);
    if (next.empty) continue;
    const kept = keep(v, next);
    if (kept !== undefined) out[key] = kept;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A value without what the paths name (undefined: all of it). */
function drop(value: unknown, state: FilterState): unknown {
  if (state.complete) return undefined;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) {
      const left = drop(v, state);
      if (left !== undefined) out.push(left);
    }
    return out;
  }
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const next = state.next(key);
    const left = next.empty ? v : drop(v, next);
    if (left !== undefined) out[key] = left;
  }
  return out;
}
