// How OpenSearch Dashboards and Kibana find what a saved object points at, so that an import can be read
// back and checked the way the product that holds it will read it (an import that says "success" can
// still hold a dashboard that fails to open with `Could not find reference "panel_1"`).
//
// A search or visualization names its index pattern by `indexRefName` in its searchSourceJSON: the
// reference of that name. A dashboard panel names its saved object by `panelRefName`:
// - exact (OpenSearch Dashboards, Kibana 7.x): the reference whose name is the panelRefName;
// - by-panel-index (Kibana 8.x, 9.x): among the references named "<panelIndex>:<name>" (the prefix taken
//   off), or among all references when none carries that panel's prefix, the one named panelRefName.
import type { SavedObject } from './saved-objects.js';

/**
 * How a product finds a dashboard panel's reference: by its exact name, or (Kibana 8 and later) among those prefixed
 * with the panel's index.
 */
export type PanelReader = 'exact' | 'by-panel-index';

/** A saved object as the product gives it back, or the error it gave for it. */
export interface ReadObject {
  id: string;
  type: string;
  attributes?: Record<string, unknown>;
  references?: SavedObject['references'];
  error?: { message?: string; statusCode?: number };
}

/** The reader of the product that holds the objects: Kibana from 8.0 reads panel references by panel index. */
export function panelReader(product: string, version: string | undefined): PanelReader {
  return product === 'Kibana' && Number(version?.split('.')[0]) >= 8 ? 'by-panel-index' : 'exact';
}

function parsed(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function panelReference(panel: Record<string, unknown>, references: SavedObject['references'], reader: PanelReader) {
  if (reader === 'exact') return references.find((r) => r.name === panel.panelRefName);
  const prefix = `${panel.panelIndex}:`;
  const own = references.filter((r) => r.name.startsWith(prefix)).map((r) => ({ ...r, name: r.name.slice(prefix.length) }));
  return (own.length ? own : references).find((r) => r.name === panel.panelRefName);
}

/**
 * What in these objects would not open: each reference named in an object that the reader cannot find, or
 * that points at no object of the set (or at one of another type). Empty when every reference resolves.
 */
export function unresolvedReferences(objects: readonly ReadObject[], reader: PanelReader): string[] {
  const types = new Map(objects.filter((o) => !o.error).map((o) => [o.id, o.type]));
  const problems: string[] = [];
  const target = (where: string, ref: { type: string; id: string } | undefined, name: unknown) => {
    if (!ref) problems.push(`${where}: could not find reference "${String(name)}"`);
    else if (types.get(ref.id) !== ref.type) problems.push(`${where}: reference "${String(name)}" points at ${ref.type} "${ref.id}", which ${types.has(ref.id) ? `is a ${types.get(ref.id)}` : 'is not there'}`);
  };
  for (const o of objects) {
    if (o.error) {
      problems.push(`${o.type} "${o.id}": ${o.error.message ?? `not found (${o.error.statusCode ?? 'error'})`}`);
      continue;
    }
    const references = o.references ?? [];
    const meta = o.attributes?.kibanaSavedObjectMeta as { searchSourceJSON?: string } | undefined;
    const indexRefName = parsed(meta?.searchSourceJSON)?.indexRefName;
    if (indexRefName !== undefined) target(`${o.type} "${o.id}"`, references.find((r) => r.name === indexRefName), indexRefName);
    if (o.type !== 'dashboard') continue;
    const panels = JSON.parse(typeof o.attributes?.panelsJSON === 'string' ? o.attributes.panelsJSON : '[]') as Array<Record<string, unknown>>;
    for (const panel of panels) {
      if (panel.panelRefName === undefined) continue;
      target(`dashboard "${o.id}" panel ${String(panel.panelIndex)}`, panelReference(panel, references, reader), panel.panelRefName);
    }
  }
  return problems;
}
