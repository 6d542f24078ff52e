// The saved objects for Dashboards and Kibana, without a Dashboards or Kibana: every object is one each
// format's importer takes (stamps no newer than the product knows, JSON attributes that parse), and every
// reference resolves the way each format's readers resolve it (OpenSearch Dashboards and Kibana 7.x by
// exact name; Kibana 8.x and 9.x by panel index, then by name). A live import into Kibana 7.10.2 is in
// the report of issue 27; here a small HTTP stand-in checks what the command sends and reads back.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { aboutText } from '../../src/cli/commands/dashboards-about.js';
import { importSavedObjects } from '../../src/dashboards/import.js';
import { nearDupFieldSpecs, type SavedObject, savedObjectsFor } from '../../src/dashboards/saved-objects.js';
import { formatFor, inFormat, SAVED_OBJECT_FORMATS, type SavedObjectFormat } from '../../src/dashboards/saved-object-formats.js';
import { type PanelReader, panelReader, unresolvedReferences } from '../../src/dashboards/saved-object-references.js';
import { resolveSignerSettings } from '../../src/signature.js';

const objects = savedObjectsFor({ index: 'news-2024', prefix: 'meta.near_dup', titleField: 'headline', about: 'threshold **0.5**' });
const byType = (type: string, list: SavedObject[] = objects) => list.filter((o) => o.type === type);
const visState = (o: SavedObject) => JSON.parse(o.attributes.visState as string);

describe('saved objects for Dashboards and Kibana', () => {
  it('hold an index pattern, two saved searches, six visualizations (one of them text) and a dashboard, all for the index', () => {
    expect(objects.map((o) => o.type).sort()).toEqual(['dashboard', 'index-pattern', 'search', 'search', ...Array(6).fill('visualization')]);
    expect(byType('index-pattern')[0].attributes.title).toBe('news-2024');
    const text = JSON.stringify(objects);
    expect(text).not.toMatch(/\{\{/);
    expect(text).toContain('meta.near_dup.cluster_size');
    expect(text).toContain('meta.near_dup.contained_in');
    expect(savedObjectsFor({ index: 'a"b', prefix: 'near_dup' })[0].attributes.title).toBe('a"b');
  });

  it('the tables say which document a row is: its id, and the field the user names', () => {
    for (const search of byType('search')) expect((search.attributes.columns as string[]).slice(0, 2), search.id).toEqual(['_id', 'headline']);
    const clusters = byType('search').find((o) => o.id.endsWith('-duplicates'))!;
    // Each canonical is a row of its cluster, first, then its duplicates nearest first.
    expect(JSON.parse((clusters.attributes.kibanaSavedObjectMeta as { searchSourceJSON: string }).searchSourceJSON).query.query).toBe('meta.near_dup.cluster_id:*');
    expect(clusters.attributes.sort).toEqual([['meta.near_dup.cluster_size', 'desc'], ['meta.near_dup.cluster_id', 'asc'], ['meta.near_dup.is_canonical', 'desc'], ['meta.near_dup.canonical_similarity', 'desc']]);
    expect(clusters.attributes.columns).toContain('meta.near_dup.canonical_similarity');
    const untitled = savedObjectsFor({ index: 'news', prefix: 'near_dup' });
    for (const search of byType('search', untitled)) expect((search.attributes.columns as string[])[0]).toBe('_id');
    expect(byType('search', untitled).every((s) => !(s.attributes.columns as string[]).includes(''))).toBe(true);
  });

  it('similarity is to the canonical on an axis from 0 to 1, labelled; the markdown panel holds the text it is given', () => {
    const similarity = byType('visualization').map(visState).find((v) => v.aggs.some((a: any) => a.params.field === 'meta.near_dup.canonical_similarity'))!;
    const bucket = similarity.aggs.find((a: any) => a.type === 'histogram').params;
    // Kibana sends extended_bounds only with has_extended_bounds, and empty buckets only with min_doc_count.
    expect(bucket).toMatchObject({ has_extended_bounds: true, extended_bounds: { min: 0, max: 1 }, min_doc_count: true, customLabel: expect.stringContaining('similarity to the canonical') });
    // Axis and column titles: a label on every aggregation (a filters aggregation labels each filter).
    for (const v of byType('visualization').map(visState)) for (const agg of v.aggs) expect(agg.type === 'filters' ? agg.params.filters.every((f: any) => f.label) : agg.params.customLabel, `${v.title} ${agg.type}`).toBeTruthy();
    // Kibana titles a bar chart's value axis from its own params ("Count" when they are left out).
    for (const v of byType('visualization').map(visState).filter((x) => x.type === 'histogram')) expect(v.params.valueAxes[0].title.text, v.title).toBe(v.aggs[0].params.customLabel);
    const markdown = byType('visualization').map(visState).find((v) => v.type === 'markdown')!;
    expect(markdown.params.markdown).toBe('threshold **0.5**');
    const dashboard = byType('dashboard')[0];
    const panels = JSON.parse(dashboard.attributes.panelsJSON as string);
    expect(panels).toHaveLength(8);
    for (const panel of panels) expect(panel.embeddableConfig.title, panel.panelIndex).toMatch(/^[A-Z]/);
  });

  it('the index pattern has labels for the fields shown, and its fields in the form Dashboards keeps without fetching them again', () => {
    const labels = JSON.parse(byType('index-pattern')[0].attributes.fieldAttrs as string);
    expect(labels['meta.near_dup.canonical_similarity']).toEqual({ customLabel: 'similarity to canonical' });
    const specs = nearDupFieldSpecs('meta.near_dup');
    // Kibana 7.10 and Dashboards refetch (and save again) a pattern with any field lacking these.
    for (const spec of specs) expect(Object.keys(spec), String(spec.name)).toEqual(expect.arrayContaining(['aggregatable', 'searchable', 'readFromDocValues', 'type', 'name']));
    expect(specs.map((s) => s.name)).toEqual(expect.arrayContaining(['_id', 'meta.near_dup.canonical_similarity', 'meta.near_dup.cluster_id']));
    expect(specs.find((s) => s.name === 'meta.near_dup.simhash')).toMatchObject({ searchable: false, aggregatable: false });
    const osd = inFormat(objects, 'opensearch-dashboards', specs).find((o) => o.type === 'index-pattern')!;
    expect(JSON.parse(osd.attributes.fields as string)).toEqual(specs);
    expect(inFormat(objects, 'kibana', specs).find((o) => o.type === 'index-pattern')!.attributes.fields).toBeUndefined();
  });
});

/** The newest migration each product knows per type: an import stamped newer is refused ("belongs to a more recent version"). */
const NEWEST: Record<string, { stamp: 'migrationVersion' | 'typeMigrationVersion'; types: Record<string, string> }> = {
  'OpenSearch Dashboards 1.x-3.x / Kibana 7.10': { stamp: 'migrationVersion', types: { 'index-pattern': '7.6.0', search: '7.9.3', visualization: '7.10.0', dashboard: '7.9.3' } },
  'Kibana 8.9': { stamp: 'typeMigrationVersion', types: { 'index-pattern': '8.0.0', search: '8.0.0', visualization: '8.5.0', dashboard: '8.9.0' } },
};
const TARGETS: Record<SavedObjectFormat, Array<{ product: keyof typeof NEWEST; reader: PanelReader }>> = {
  'opensearch-dashboards': [
    { product: 'OpenSearch Dashboards 1.x-3.x / Kibana 7.10', reader: 'exact' },
    // Kibana 8.0 to 8.8 take this file and migrate it; they read panels by panel index.
    { product: 'OpenSearch Dashboards 1.x-3.x / Kibana 7.10', reader: 'by-panel-index' },
  ],
  kibana: [{ product: 'Kibana 8.9', reader: 'by-panel-index' }],
};
const newer = (a: string, b: string) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i];
  return false;
};

describe('every object imports in each format, and every reference resolves as its readers resolve it', () => {
  for (const format of SAVED_OBJECT_FORMATS) {
    for (const { product, reader } of TARGETS[format]) {
      it(`${format} into ${product}, panels read ${reader}`, () => {
        const formatted = inFormat(objects, format, nearDupFieldSpecs('meta.near_dup'));
        for (const o of formatted) {
          const stamp = NEWEST[product].stamp === 'migrationVersion' ? (o.migrationVersion as Record<string, string> | undefined)?.[o.type] : (o.typeMigrationVersion as string | undefined);
          expect(stamp, `${o.id} stamp`).toBeDefined();
          expect(newer(stamp!, NEWEST[product].types[o.type]), `${o.id} ${stamp}`).toBe(false);
          for (const key of ['visState', 'uiStateJSON', 'panelsJSON', 'optionsJSON', 'fields', 'fieldAttrs']) if (key in o.attributes) expect(() => JSON.parse(o.attributes[key] as string), `${o.id} ${key}`).not.toThrow();
          const meta = o.attributes.kibanaSavedObjectMeta as { searchSourceJSON?: string } | undefined;
          if (meta) expect(() => JSON.parse(meta.searchSourceJSON!)).not.toThrow();
        }
        expect(unresolvedReferences(formatted, reader)).toEqual([]);
      });
    }
  }

  it('the Kibana 8.9+ file does not open in Kibana 7.x or Dashboards: the check says which panel, as Kibana did', () => {
    const problems = unresolvedReferences(inFormat(objects, 'kibana'), 'exact');
    expect(problems).toHaveLength(8);
    expect(problems[0]).toMatch(/panel 1: could not find reference "panel_1"$/);
  });

  it('a reference to an object missing, or of another type, or a search without its index pattern, is found', () => {
    const formatted = inFormat(objects, 'opensearch-dashboards');
    const missing = formatted.map((o) => (o.type === 'index-pattern' ? { id: o.id, type: o.type, error: { statusCode: 404, message: 'Not Found' } } : o));
    const problems = unresolvedReferences(missing, 'exact');
    expect(problems).toContain(`index-pattern "${objects[0].id}": Not Found`);
    expect(problems.filter((p) => p.includes('is not there'))).toHaveLength(byType('search').length + byType('visualization').length - 1);
    const dashboard = formatted.find((o) => o.type === 'dashboard')!;
    const retyped = { ...dashboard, references: dashboard.references.map((r) => ({ ...r, type: 'search' })) };
    expect(unresolvedReferences([...formatted.filter((o) => o !== dashboard), retyped], 'exact').filter((p) => p.includes('is a visualization'))).toHaveLength(6);
  });
});

describe('the format and the reader follow the version the product reports', () => {
  it('Dashboards and Kibana 7.10 to 8.8 take the OpenSearch Dashboards file, Kibana 8.9 and later the Kibana file', () => {
    for (const v of ['1.0.0', '2.19.1', '3.1.0']) expect(formatFor('OpenSearch Dashboards', v)).toBe('opensearch-dashboards');
    for (const v of ['7.10.2', '7.17.29', '8.0.0', '8.8.2']) expect(formatFor('Kibana', v), v).toBe('opensearch-dashboards');
    for (const v of ['8.9.0', '8.19.3', '9.1.0']) expect(formatFor('Kibana', v), v).toBe('kibana');
    expect(() => formatFor('Kibana', '7.9.3')).toThrow(/Kibana 7.9.3 is older than 7.10/);
    expect(() => formatFor('Kibana', 'next')).toThrow(/version "next"/);
    expect([panelReader('Kibana', '7.10.2'), panelReader('OpenSearch Dashboards', '3.1.0'), panelReader('Kibana', '8.0.0'), panelReader('Kibana', '9.1.0')]).toEqual(['exact', 'exact', 'by-panel-index', 'by-panel-index']);
  });
});

describe('the "how to read" panel', () => {
  it('states the threshold, the clustering and the signature parameters of the recorded dedup run, or where it looked', () => {
    const params = resolveSignerSettings({}).params;
    const text = aboutText('peps', { version: 1, index: 'peps', params, prefix: 'near_dup', minSimilarity: 0.6, lastRunAt: '2026-11-25T10:00:00.000Z', clusters: 'centres', order: JSON.stringify({ canonical: 'longest', sortField: 'near_dup.token_count' }) }, '.near-dup/dedup-peps.json');
    expect(text).toContain('**0.6**');
    expect(text).toContain('26 bands of 4 rows');
    expect(text).toContain('normalizer `norm-html`');
    expect(text).toContain('canonical: the longest document of each cluster (by `near_dup.token_count`)');
    expect(text).toContain('2026-11-25 10:00:00 UTC');
    expect(aboutText('peps', undefined, '.near-dup/dedup-peps.json')).toMatch(/no record of a dedup run at `\.near-dup\/dedup-peps\.json`.*--dedup-state/);
  });
});

/** A stand-in for the saved objects API: it keeps what is imported and gives it back, answering as `product` of `version`. */
async function withStandIn(header: 'kbn-name' | 'osd-name', version: string, run: (url: string, imported: () => any[]) => Promise<void>) {
  const store = new Map<string, any>();
  let last: any[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', [header]: 'stand-in' });
        res.end(JSON.stringify(json));
      };
      if (req.url === '/api/status') return answer(200, { version: { number: version } });
      if (req.url?.startsWith('/api/index_patterns/_fields_for_wildcard')) return answer(200, { fields: [{ name: '_id', type: 'string', searchable: true, aggregatable: true, readFromDocValues: false }, { name: 'headline', type: 'string', searchable: true, aggregatable: false, readFromDocValues: false }] });
      if (req.url?.startsWith('/api/saved_objects/_import')) {
        last = body.split('\n').filter((l) => l.startsWith('{"id"')).map((l) => JSON.parse(l));
        for (const o of last) store.set(`${o.type}:${o.id}`, o);
        return answer(200, { success: true, successCount: last.length });
      }
      if (req.url === '/api/saved_objects/_bulk_get') {
        const asked = JSON.parse(body) as Array<{ type: string; id: string }>;
        return answer(200, { saved_objects: asked.map((a) => store.get(`${a.type}:${a.id}`) ?? { ...a, error: { statusCode: 404, message: 'Not Found' } }) });
      }
      answer(404, { message: 'no such route' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => last);
  } finally {
    server.close();
  }
}

describe('an import', () => {
  const settings = { index: 'news-2024', prefix: 'meta.near_dup' };

  it('sends the format of the product and version that answers, with the fields it lists, and reads it back', async () => {
    for (const [header, version, format] of [['kbn-name', '7.10.2', 'opensearch-dashboards'], ['kbn-name', '8.19.3', 'kibana'], ['osd-name', '2.19.1', 'opensearch-dashboards']] as const) {
      await withStandIn(header, version, async (url, imported) => {
        const result = await importSavedObjects(objects, { url, ...settings });
        expect([result.product, result.version, result.format], version).toEqual([header === 'kbn-name' ? 'Kibana' : 'OpenSearch Dashboards', version, format]);
        expect(result.dashboardUrl).toBe(`${url}/app/dashboards#/view/near-dup-news-2024-dashboard`);
        const pattern = imported().find((o) => o.type === 'index-pattern');
        if (format === 'kibana') expect(pattern.attributes.fields).toBeUndefined();
        else expect(JSON.parse(pattern.attributes.fields).map((f: any) => f.name)).toEqual(['_id', 'headline']);
      });
    }
  });

  it('fails, naming the panel and the format to use, when the dashboard it imported would not open there', async () => {
    await withStandIn('kbn-name', '7.10.2', async (url) => {
      await expect(importSavedObjects(objects, { url, ...settings, format: 'kibana' })).rejects.toThrow(/Kibana 7\.10\.2 at .* took the import \(--format kibana\), but the dashboard would not open there: dashboard "near-dup-news-2024-dashboard" panel 1: could not find reference "panel_1".*Import again with --format opensearch-dashboards/);
    });
  });

  it('refuses a Kibana older than 7.10 before sending anything', async () => {
    await withStandIn('kbn-name', '7.9.3', async (url, imported) => {
      await expect(importSavedObjects(objects, { url, ...settings })).rejects.toThrow(/older than 7\.10/);
      expect(imported()).toEqual([]);
    });
  });
});
