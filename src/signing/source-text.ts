// A JSON object's text changed where near-dup writes, and nowhere else. Parsed and serialized again, a source
// would lose what JSON.parse cannot hold: integers beyond 2^53 ("1234567890123456789" becomes
// "1234567890123456800"), "1.0", "1e2", key order ("10" before "2"), spacing. So the sources near-dup signs
// are edited as text (jsonc-parser finds each member by its path): the members named are removed or set, and
// every other byte reaches the engine as the client gave it. The text must already be strict JSON (the
// callers JSON.parse it first, to read the document's text and refuse what is not an object).
import { DocumentTextError } from '../annotation.js';
import { applyEdits, findNodeAtLocation, type JSONPath, modify, parseTree } from 'jsonc-parser';
import { forCount, plural } from '../plural.js';

/**
 * A JSON object's text, edited where near-dup writes and nowhere else (the file header says why not parsed and
 * serialized).
 */
export class SourceText {
  constructor(public text: string) {}

  /** Removes the member at `path` (nothing when there is none). */
  remove(path: JSONPath): void {
    this.text = applyEdits(this.text, modify(this.text, path, undefined, {}));
  }

  /** Sets the member at `path` to `value`, made with the objects it needs on the way (a member that is not an object on the way is replaced by one). */
  set(path: JSONPath, value: unknown): void {
    const leading = this.#objectsOnTheWay(path);
    // A missing member on the way, or one that is not an object: replaced by the rest of the path as one value.
    const at = path.slice(0, leading + 1);
    const rest = path.slice(leading + 1).reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
    this.text = applyEdits(this.text, modify(this.text, at, rest, {}));
  }

  /** The text of the value at `path`, as given; undefined when there is none. */
  valueText(path: JSONPath): string | undefined {
    const node = findNodeAtLocation(this.#tree(), path);
    return node === undefined ? undefined : this.text.slice(node.offset, node.offset + node.length);
  }

  /** Sets the member at `path` to a value given as JSON text, its bytes kept. */
  setText(path: JSONPath, valueText: string): void {
    // Set through a placeholder the text cannot otherwise hold at that place, then swapped for the bytes.
    const marker = `\u0000near-dup-${Math.random().toString(36).slice(2)}\u0000`;
    this.set(path, marker);
    const node = findNodeAtLocation(this.#tree(), path);
    if (node === undefined) throw new Error(`no member at ${JSON.stringify(path)} after setting it`);
    this.text = `${this.text.slice(0, node.offset)}${valueText}${this.text.slice(node.offset + node.length)}`;
  }

  /** How many members on the way to `path`'s last one exist and are objects (counted from the start). */
  #objectsOnTheWay(path: JSONPath): number {
    const tree = this.#tree();
    let count = 0;
    while (count < path.length - 1 && findNodeAtLocation(tree, path.slice(0, count + 1))?.type === 'object') count++;
    return count;
  }

  #tree() {
    const tree = parseTree(this.text);
    if (tree === undefined) throw new Error('the source is not JSON');
    return tree;
  }
}

/** `fields` set under the prefix (a dotted path) below `base`: each field its own member, the prefix object's other members kept. */
export function setUnderPrefix(source: SourceText, base: JSONPath, prefix: string, fields: Record<string, unknown>): void {
  const at = [...base, ...prefix.split('.')];
  const existing = source.valueText(at);
  if (existing === undefined || !existing.startsWith('{')) {
    source.set(at, fields);
    return;
  }
  // The prefix object edited by itself (small beside a document's text, which each edit would parse again),
  // then put back in one edit.
  const prefixObject = new SourceText(existing);
  for (const [key, value] of Object.entries(fields)) prefixObject.set([key], value);
  source.setText(at, prefixObject.text);
}

/**
 * The key paths of `obj` a client could set near-dup's fields by: dotted names that reach the prefix or below
 * it ("near_dup.simhash", {"meta": {"near_dup.bands": ...}}, which the engines merge into the object), and
 * with `all` the member at the prefix itself. The paths name members as written (a dotted key is one segment).
 */
export function prefixKeyPaths(obj: Record<string, unknown>, path: readonly string[], all: boolean): string[][] {
  const found = keyPathsReaching(obj, path, all);
  // Each is removed by an edit of the whole text: a document of thousands would cost seconds of a signing thread.
  if (found.length > MAX_PREFIX_KEYS) {
    throw new DocumentTextError(`${plural(found.length, 'key')} ${forCount(found.length, 'reaches', 'reach')} the near-dup fields ("${path.join('.')}") by dotted names; near-dup writes those fields itself: remove them from the document`);
  }
  return found;
}

/** More keys reaching the prefix than a document of near-dup's own holds (it writes about a dozen). */
const MAX_PREFIX_KEYS = 64;

function keyPathsReaching(obj: Record<string, unknown>, path: readonly string[], all: boolean): string[][] {
  const found: string[][] = [];
  for (const [key, member] of Object.entries(obj)) {
    const segments = key.split('.');
    const leads = segments.every((segment, i) => i >= path.length || segment === path[i]);
    if (!leads) continue;
    if (segments.length >= path.length && (all || segments.length > 1)) found.push([key]);
    else if (segments.length < path.length && member !== null && typeof member === 'object' && !Array.isArray(member)) {
      for (const inner of keyPathsReaching(member as Record<string, unknown>, path.slice(segments.length), all)) found.push([key, ...inner]);
    }
  }
  return found;
}

/**
 * The document's text with near-dup's `fields` under the prefix, the keys that would reach the prefix by a
 * dotted name removed first (`doc` is the text parsed). Only those members change.
 */
export function sourceWithFields(text: string, doc: Record<string, unknown>, prefix: string, fields: Record<string, unknown>): string {
  const top = prefix.split('.')[0];
  if (!Object.keys(doc).some((key) => key === top || key.startsWith(`${top}.`))) return appendMembers(text, underPrefixObject(prefix, fields));
  const source = new SourceText(text);
  for (const path of prefixKeyPaths(doc, prefix.split('.'), false)) source.remove(path);
  setUnderPrefix(source, [], prefix, fields);
  return source.text;
}

/** The object text with `members` added before its closing brace; the rest of its bytes unchanged. */
export function appendMembers(objectText: string, members: Record<string, unknown>): string {
  const close = objectText.lastIndexOf('}');
  const head = objectText.slice(0, close).trimEnd();
  const inner = JSON.stringify(members).slice(1, -1);
  return `${head}${head.endsWith('{') ? '' : ','}${inner}}`;
}

function underPrefixObject(prefix: string, fields: Record<string, unknown>): Record<string, unknown> {
  return prefix.split('.').reduceRight<Record<string, unknown>>((inner, key) => ({ [key]: inner }), fields);
}
