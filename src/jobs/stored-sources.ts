// Documents' sources as the engine holds them, byte for byte, for annotate --keep-version, which writes each
// document back whole: parsed by JSON.parse and serialized again, a source would lose what JSON cannot carry
// through a JavaScript number (1234567890123456789 becomes 1234567890123456800, 9223372036854775807 no longer
// fits a long field, "1.0" becomes "1", "1e2" "100", "10" moves after "2"). So the _mget answer is read as
// text and each `_source` is found in it by its offsets (jsonc-parser's tree), never parsed as a value.
import { findNodeAtLocation, getNodeValue, type Node, parseTree, type ParseError } from 'jsonc-parser';
import type { EngineClient } from '../engine/client.js';
import { actionMeta, type DocLocation } from '../engine/doc-location.js';
import { EngineResponseError } from '../engine/errors.js';
import { privilegeRefusal } from '../engine/refusal.js';
import { plural } from '../plural.js';

/**
 * One document as the _mget found it: its source's text and the version it is at (as text too: an external
 * version may be any long, beyond what a number holds); or not found; or not read.
 */
export type StoredSource =
  | { found: true; source: string; version?: string; seqNo?: number; primaryTerm?: number }
  | { found: false; error?: string; refusal?: unknown };

/** The sources of `docs`, each read where it lives (its own index and routing), in the order given. */
export async function readStoredSources(client: Pick<EngineClient, 'requestText' | 'url'>, docs: ReadonlyArray<{ id: string; location: DocLocation }>): Promise<StoredSource[]> {
  if (docs.length === 0) return []; // the engines refuse an _mget of nothing
  const answer = await client.requestText('POST', '/_mget', { docs: docs.map(({ id, location }) => actionMeta(id, location)) });
  const sources = storedSources(answer, docs.length);
  // A user who may not read the documents is refused each one alike: a refusal of the whole request.
  for (const s of sources) if (!s.found && s.refusal !== undefined) throw new EngineResponseError(403, 'security_exception', s.error, 'POST', '/_mget', client.url, { error: s.refusal });
  return sources;
}

/** The documents of an _mget answer (`count` asked), read from its text. */
export function storedSources(answer: string, count: number): StoredSource[] {
  const errors: ParseError[] = [];
  const tree = parseTree(answer, errors, { disallowComments: true });
  const docs = tree && findNodeAtLocation(tree, ['docs']);
  if (errors.length > 0 || docs?.type !== 'array' || docs.children?.length !== count) {
    throw new Error(`the engine's answer to an _mget of ${plural(count, 'document')} is not one (it begins ${JSON.stringify(answer.slice(0, 200))})`);
  }
  return (docs.children ?? []).map((doc) => storedSource(answer, doc));
}

function storedSource(answer: string, doc: Node): StoredSource {
  const error = findNodeAtLocation(doc, ['error']);
  if (error) {
    const value = getNodeValue(error) as unknown;
    const reason = typeof value === 'string' ? value : (value as { reason?: string })?.reason;
    const refusal = privilegeRefusal({ error: value });
    return { found: false, error: reason ?? JSON.stringify(value), ...(refusal ? { refusal: value } : {}) };
  }
  if (findNodeAtLocation(doc, ['found'])?.value !== true) return { found: false };
  const source = findNodeAtLocation(doc, ['_source']);
  if (source?.type !== 'object') return { found: false, error: 'the engine keeps no _source for it' };
  const number = (key: string) => {
    const value = findNodeAtLocation(doc, [key])?.value;
    return typeof value === 'number' ? value : undefined;
  };
  const version = findNodeAtLocation(doc, ['_version']);
  return {
    found: true,
    source: textOf(answer, source),
    version: version?.type === 'number' ? textOf(answer, version) : undefined,
    seqNo: number('_seq_no'),
    primaryTerm: number('_primary_term'),
  };
}

function textOf(answer: string, node: Node): string {
  return answer.slice(node.offset, node.offset + node.length);
}
