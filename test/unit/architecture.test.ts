// The house as ARCHITECTURE.md draws it: no import circles in src/, and every import pointing down the layers
// (the condenser's pure code never reaches a cluster; talking to a cluster never reaches a job or the CLI).
// Type-only imports count: a circle of types is still one a reader has to untangle.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCircles, importGraph, moduleEdges, moduleOf } from '../support/import-graph.js';

/**
 * The layers, bottom first: a module imports only from layers below its own, or from its own layer where
 * the layer is one unit (`together`). Top-level files of src/ are modules of their own name.
 */
const LAYERS: Array<{ modules: string[]; together?: boolean }> = [
  { modules: ['errors', 'own-keys', 'plural', 'worker-file'] }, // what every layer shares: error classes, own-key reads, counts in prose, where a worker thread's code is
  { modules: ['text'] }, // normalizers, tokenizers (pure)
  { modules: ['sketch'] }, // token hashes, MinHash, LSH, SimHash (pure)
  { modules: ['presets', 'signature', 'annotation', 'stored'], together: true }, // the condenser and the stored contract
  { modules: ['engine'] }, // talking to a cluster: transport, connection, support table
  { modules: ['indices', 'signing'] }, // index administration; signing at scale (workers)
  { modules: ['dashboards', 'jobs', 'proxy'] }, // saved objects; annotate, ingest, similar, dedup; the signing proxy
  { modules: ['explore'] }, // the explore server reads as similar does
  { modules: ['cli', 'index'] }, // the command line and the library's entry point
];


const layerOf = (module: string) => LAYERS.findIndex((layer) => layer.modules.includes(module));

/** Why an import from one module to another goes against the layers, or undefined when it does not. */
function layerViolation(from: string, to: string): string | undefined {
  const [a, b] = [layerOf(from), layerOf(to)];
  if (a === -1 || b === -1) return `${a === -1 ? from : to} is in no layer of test/unit/architecture.test.ts: place it`;
  if (b < a || (a === b && LAYERS[a].together)) return undefined;
  return `${from} (layer ${a}) may not import ${to} (layer ${b})`;
}

const graph = importGraph(path.resolve(import.meta.dirname, '..', '..', 'src'));

describe('the import graph of src/', () => {
  it('has no import circles', () => {
    const circles = importCircles(graph).map((c) => c.join(' -> '));
    expect(circles).toEqual([]);
  });

  it('points down the layers', () => {
    const wrong = [...moduleEdges(graph)].flatMap(([edge, example]) => {
      const [from, to] = edge.split(' -> ');
      const why = layerViolation(from, to);
      return why ? [`${why}: ${example}`] : [];
    });
    expect(wrong).toEqual([]);
  });

  it('places every module in a layer', () => {
    const modules = new Set([...graph.keys()].map(moduleOf));
    expect([...modules].filter((m) => layerOf(m) === -1)).toEqual([]);
  });
});

describe('the rules themselves', () => {
  it('refuse the imports ARCHITECTURE.md forbids', () => {
    for (const [from, to] of [
      ['sketch', 'engine'],
      ['text', 'engine'],
      ['sketch', 'jobs'],
      ['text', 'jobs'],
      ['engine', 'jobs'],
      ['engine', 'cli'],
      ['engine', 'indices'],
      ['engine', 'dashboards'],
      ['jobs', 'cli'],
      ['jobs', 'proxy'],
    ]) {
      expect(layerViolation(from, to), `${from} -> ${to}`).toBeDefined();
    }
    expect(layerViolation('jobs', 'engine')).toBeUndefined();
    expect(layerViolation('stored', 'signature')).toBeUndefined();
  });

  it('find a circle and leave a chain alone', () => {
    const circle = new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]]);
    expect(importCircles(circle)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(importCircles(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).toEqual([]);
  });
});
