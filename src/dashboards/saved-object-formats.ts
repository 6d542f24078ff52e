// The saved objects in the format each product exports today, so that an import is read as current and
// not run through every migration since the oldest format (or refused as too new).
//
// OpenSearch Dashboards 2.x and 3.x (forked from Kibana 7.10.2) stamp each object with `migrationVersion`,
// the version of its type's last migration: index-pattern 7.6.0, search and dashboard 7.9.3,
// visualization 7.10.0; dashboards name their panel references panel_0, panel_1, ...
//
// Kibana 8.x and 9.x stamp `coreMigrationVersion` and `typeMigrationVersion` (and `managed`); Elastic asks
// that both be kept in files meant for import. A data view has a `name` beside its index pattern (`title`);
// a dashboard's panels carry their `type`, and each panel reference is named "<panelIndex>:panel_<panelIndex>"
// with the panel's panelRefName "panel_<panelIndex>". The stamps below are those of Kibana 8.9 and later
// exports (dashboard 8.9.0, visualization 8.5.0, data view and saved search 8.0.0), so these files import
// into Kibana 8.9 to 9.x; a Kibana 8.0 to 8.8 refuses them as newer than itself (import the OpenSearch
// Dashboards file there: Kibana migrates it).
//
// Which one to send is read from the version the product reports, by the engine support table
// (engine/support.json, `savedObjects` of each major): OpenSearch Dashboards (any version) and Kibana 7.10
// to 8.8 take the OpenSearch Dashboards file (Kibana 8.x migrates it on import); Kibana 8.9 and later the
// Kibana file. A Kibana 7.x reads panel references by their exact name, so the Kibana file's
// "1:panel_1" references fail there; a Kibana before 7.10 refuses visualizations stamped 7.10.0.
import { UserError } from '../errors.js';
import type { Flavour } from '../engine/detect.js';
import { atLeast, type FormatFrom, majorsOf, SUPPORT, type SavedObjectFormat } from '../engine/support.js';
import type { SavedObject } from './saved-objects.js';

export type { SavedObjectFormat } from '../engine/support.js';
/** Every format, in the order the command line offers them. */
export const SAVED_OBJECT_FORMATS: readonly SavedObjectFormat[] = ['opensearch-dashboards', 'kibana'];

const OSD_MIGRATION_VERSION: Record<string, string> = { 'index-pattern': '7.6.0', search: '7.9.3', visualization: '7.10.0', dashboard: '7.9.3' };
const KIBANA_CORE_MIGRATION_VERSION = '8.8.0';
const KIBANA_TYPE_MIGRATION_VERSION: Record<string, string> = { 'index-pattern': '8.0.0', search: '8.0.0', visualization: '8.5.0', dashboard: '8.9.0' };

/** The format the product of this version imports as current (see above). */
export function formatFor(product: 'OpenSearch Dashboards' | 'Kibana', version: string): SavedObjectFormat {
  const formats = formatsOf(product);
  // A product that takes one format whatever its version: its version is not read.
  if (formats.every((f) => f.format === formats[0].format)) return formats[0].format;
  const [major, minor] = version.split('.').map(Number);
  if (!Number.isInteger(major) || !Number.isInteger(minor)) throw new UserError(`${product} reports version "${version}", which near-dup cannot read; give --format opensearch-dashboards (Kibana 7.10 to 8.8) or kibana (8.9 and later)`);
  const format = formats.findLast((f) => atLeast({ major, minor }, f.from));
  if (!format) throw new UserError(`${product} ${version} is older than ${formats[0].from}, the oldest these saved objects import into (their visualizations are of ${formats[0].from}); upgrade ${product}, or build the objects there by hand from --print`);
  return format.format;
}

/** The saved-object formats of a Dashboards product, from its flavour's majors, oldest first. */
function formatsOf(product: 'OpenSearch Dashboards' | 'Kibana'): FormatFrom[] {
  const flavour = (Object.keys(SUPPORT.flavours) as Flavour[]).find((f) => SUPPORT.flavours[f].dashboards === product);
  return flavour ? majorsOf(flavour).flatMap((m) => m.savedObjects) : [];
}

/** A saved object with the fields its product's format adds (migration stamps and the like). */
export type FormattedObject = SavedObject & Record<string, unknown>;

/**
 * The objects in a format. `fields` (the index pattern's field list, as Dashboards lists them) go into the
 * OpenSearch Dashboards file: without them its first load fetches them and saves the pattern again from
 * every panel at once (409 conflicts). Kibana 8.9+ reads a data view's fields live, so its file has none.
 */
export function inFormat(objects: readonly SavedObject[], format: SavedObjectFormat, fields?: readonly Record<string, unknown>[]): FormattedObject[] {
  return objects.map((o) => {
    if (format === 'kibana') return forKibana(o, objects);
    const attributes = o.type === 'index-pattern' && fields ? { ...o.attributes, fields: JSON.stringify(fields) } : o.attributes;
    return { ...o, attributes, migrationVersion: { [o.type]: versionOf(OSD_MIGRATION_VERSION, o.type) } };
  });
}

function versionOf(table: Record<string, string>, type: string): string {
  const version = table[type];
  if (!version) throw new Error(`no saved-object format version for type "${type}"`);
  return version;
}

function forKibana(o: SavedObject, all: readonly SavedObject[]): FormattedObject {
  const stamped = { coreMigrationVersion: KIBANA_CORE_MIGRATION_VERSION, typeMigrationVersion: versionOf(KIBANA_TYPE_MIGRATION_VERSION, o.type), managed: false };
  if (o.type === 'index-pattern') return { ...o, attributes: { ...o.attributes, name: `near-dup: ${o.attributes.title}` }, ...stamped };
  if (o.type !== 'dashboard') return { ...o, ...stamped };
  const types = new Map(all.map((x) => [x.id, x.type]));
  const byName = new Map(o.references.map((r) => [r.name, r]));
  const references: SavedObject['references'] = [];
  const panels = (JSON.parse(o.attributes.panelsJSON as string) as Array<Record<string, unknown>>).map((panel) => {
    const { version: _version, ...rest } = panel;
    const ref = byName.get(panel.panelRefName as string);
    if (!ref) return rest;
    const panelRefName = `panel_${panel.panelIndex}`;
    references.push({ ...ref, name: `${panel.panelIndex}:${panelRefName}` });
    return { ...rest, type: types.get(ref.id) ?? ref.type, panelRefName };
  });
  return { ...o, attributes: { ...o.attributes, panelsJSON: JSON.stringify(panels) }, references, ...stamped };
}
