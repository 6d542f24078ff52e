// A document's keys as plain data, whatever they are named. The engines store a field called "__proto__"
// or "constructor" like any other, and JSON.parse makes such a key an own property; what must never happen
// is reading a field through the prototype chain ("constructor" of an object without one is Object), or
// copying a key by assignment (`copy["__proto__"] = value` sets copy's prototype: its fields then seem to
// be everything `value` holds). Pure: no imports.

/** The value of an own key of `obj`, or undefined: never one found through the prototype chain. */
export function ownValue(obj: object, key: string): unknown {
  return Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

/** Sets `key` of `obj` as an own property, as JSON.parse would: for "__proto__" too, which assignment would take as the prototype. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/**
 * Where a key path names an object's prototype: the index of a "__proto__" segment, or of a "prototype"
 * segment right after "constructor" (what merges and path walks that follow keys reach Object.prototype by);
 * -1 when none does. Only segments at `from` or later count.
 */
export function prototypeSegment(segments: readonly string[], from = 0): number {
  for (let i = Math.max(0, from); i < segments.length; i++) {
    if (segments[i] === '__proto__') return i;
    if (segments[i] === 'prototype' && i > 0 && segments[i - 1] === 'constructor') return i;
  }
  return -1;
}

/**
 * The first key path at or below `under` (dotted segments) in `value` that names an object's prototype
 * (see prototypeSegment), as a dotted path; undefined when there is none. Keys are read as the engines
 * read them: a dotted name is a path ({"a.__proto__": 1} is a.__proto__), and arrays hold objects at
 * their own path. Only keys on the way to `under` are followed, so a document without `under` costs a
 * look at its top-level keys.
 */
export function prototypeKeyUnder(value: unknown, under: readonly string[], path: readonly string[] = []): string | undefined {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = prototypeKeyUnder(item, under, path);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const next = path.length < under.length ? under[path.length] : undefined;
  for (const key of Object.keys(value)) {
    // Most keys are off the way: passed over without splitting them.
    if (next !== undefined && !(key.startsWith(next) && (key.length === next.length || key.charCodeAt(next.length) === 0x2e))) continue;
    const full = [...path, ...key.split('.')];
    if (!full.every((segment, i) => i >= under.length || segment === under[i])) continue;
    const at = prototypeSegment(full, under.length);
    if (at >= 0) return full.slice(0, at + 1).join('.');
    const found = prototypeKeyUnder((value as Record<string, unknown>)[key], under, full);
    if (found !== undefined) return found;
  }
  return undefined;
}
