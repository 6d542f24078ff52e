import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { importSavedObjects, savedObjectsFor } from '../../src/engine/dashboards.js';
import { inFormat } from '../../src/engine/saved-object-formats.js';

describe('saved objects for Dashboards and Kibana', () => {
  const objects = savedObjectsFor('news-2024', 'meta.near_dup');

  it('hold an index pattern, two saved searches, five visualizations and a dashboard, all for the index', () => {
    expect(objects.map((o) => o.type).sort()).toEqual(['dashboard', 'index-pattern', 'search', 'search', 'visualization', 'visualization', 'visualization', 'visualization', 'visualization']);
    expect(objects.find((o) => o.type === 'index-pattern')!.attributes.title).toBe('news-2024');
    const text = JSON.stringify(objects);
    expect(text).not.toMatch(/\{\{/);
    expect(text).toContain('meta.near_dup.cluster_size');
    // Partial copies (dedup --containment) have their own search and histogram.
    expect(text).toContain('meta.near_dup.contained_in');
    expect(text).toContain('meta.near_dup.max_containment');
  });

  it('every reference points at an object of the set, with the right type', () => {
    const byId = new Map(objects.map((o) => [o.id, o.type]));
    for (const o of objects) for (const ref of o.references) expect(byId.get(ref.id), `${o.id} -> ${ref.id}`).toBe(ref.type);
    const dashboard = objects.find((o) => o.type === 'dashboard')!;
    const panels = JSON.parse(dashboard.attributes.panelsJSON as string) as Array<{ panelRefName: string }>;
    expect(panels.map((p) => p.panelRefName).sort()).toEqual(dashboard.references.map((r) => r.name).sort());
  });

  it('nested JSON attributes stay valid JSON, with the fields of the prefix', () => {
    for (const o of objects.filter((x) => x.type === 'visualization')) {
      const state = JSON.parse(o.attributes.visState as string);
      const fields = state.aggs.map((a: { params: { field?: string } }) => a.params.field).filter(Boolean);
      for (const field of fields) expect(field).toMatch(/^meta\.near_dup\./);
      JSON.parse((o.attributes.kibanaSavedObjectMeta as { searchSourceJSON: string }).searchSourceJSON);
    }
    expect(savedObjectsFor('a"b', 'near_dup')[0].attributes.title).toBe('a"b');
  });
});

describe('the format each product exports today', () => {
  const objects = savedObjectsFor('news', 'near_dup');

  it('OpenSearch Dashboards 2.x/3.x: migrationVersion of each type, legacy panel references', () => {
    const osd = inFormat(objects, 'opensearch-dashboards');
    const expected: Record<string, string> = { 'index-pattern': '7.6.0', search: '7.9.3', visualization: '7.10.0', dashboard: '7.9.3' };
    for (const o of osd) {
      expect(o.migrationVersion, o.id).toEqual({ [o.type]: expected[o.type] });
      expect(o).not.toHaveProperty('coreMigrationVersion');
      expect(o).not.toHaveProperty('typeMigrationVersion');
    }
    const dashboard = osd.find((o) => o.type === 'dashboard')!;
    expect(dashboard.references.map((r) => r.name)).toEqual(dashboard.references.map((_, i) => `panel_${i}`));
  });

  it('Kibana 8.9+/9.x: core and type migration versions, managed, a named data view, panel references by panel index', () => {
    const kibana = inFormat(objects, 'kibana');
    const expected: Record<string, string> = { 'index-pattern': '8.0.0', search: '8.0.0', visualization: '8.5.0', dashboard: '8.9.0' };
    for (const o of kibana) {
      expect(o, o.id).toMatchObject({ coreMigrationVersion: '8.8.0', typeMigrationVersion: expected[o.type], managed: false });
      expect(o).not.toHaveProperty('migrationVersion');
    }
    expect(kibana.find((o) => o.type === 'index-pattern')!.attributes).toEqual({ title: 'news', name: 'near-dup: news' });
    const dashboard = kibana.find((o) => o.type === 'dashboard')!;
    const panels = JSON.parse(dashboard.attributes.panelsJSON as string) as Array<{ panelIndex: string; panelRefName: string; type: string; version?: string }>;
    expect(panels).toHaveLength(7);
    const byId = new Map(kibana.map((o) => [o.id, o.type]));
    for (const panel of panels) {
      expect(panel.panelRefName).toBe(`panel_${panel.panelIndex}`);
      expect(panel.version).toBeUndefined();
      const ref = dashboard.references.find((r) => r.name === `${panel.panelIndex}:${panel.panelRefName}`);
      expect(ref, panel.panelIndex).toBeDefined();
      expect(panel.type).toBe(byId.get(ref!.id));
    }
    // The same objects otherwise: nothing of the content is lost on the way.
    expect(kibana.filter((o) => o.type === 'visualization').map((o) => o.attributes.visState)).toEqual(objects.filter((o) => o.type === 'visualization').map((o) => o.attributes.visState));
  });

  it('an import asks which product answers and sends its format', async () => {
    for (const [header, format] of [['kbn-name', 'kibana'], ['osd-name', 'opensearch-dashboards']] as const) {
      let imported = '';
      const server = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          if (req.url?.includes('_import')) imported = body;
          res.writeHead(200, { 'content-type': 'application/json', [header]: 'test' });
          res.end(req.url?.includes('_import') ? JSON.stringify({ success: true, successCount: 9 }) : '{"status":{}}');
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const result = await importSavedObjects(objects, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
        expect(result.product).toBe(header === 'kbn-name' ? 'Kibana' : 'OpenSearch Dashboards');
        const lines = imported.split('\n').filter((l) => l.startsWith('{"id"'));
        expect(lines.map((l) => JSON.parse(l))).toEqual(JSON.parse(JSON.stringify(inFormat(objects, format))));
      } finally {
        server.close();
      }
    }
  });
});
