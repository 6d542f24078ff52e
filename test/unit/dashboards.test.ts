import { describe, expect, it } from 'vitest';
import { savedObjectsFor } from '../../src/engine/dashboards.js';

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
