// The import graph of src/, read from the source text (relative specifiers of static imports, re-exports and
// dynamic imports, type-only ones included: a circle of types is still a circle a reader has to untangle).
// Used by test/unit/architecture.test.ts to keep the layers of ARCHITECTURE.md as they are drawn.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Each source file (relative to src/, with / separators) and the source files it imports. */
export type ImportGraph = Map<string, string[]>;

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;

function sourceFiles(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full, base);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path.relative(base, full).split(path.sep).join('/')] : [];
  });
}

/** The specifiers a file imports, relative ones only (packages and node: built-ins are not layers). */
export function relativeSpecifiers(text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((m) => m[2]);
}

/** The graph of every .ts file under `srcDir`; imports of files outside it (JSON, mappings) are left out. */
export function importGraph(srcDir: string): ImportGraph {
  const files = sourceFiles(srcDir);
  const known = new Set(files);
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const text = readFileSync(path.join(srcDir, file), 'utf8');
    const targets = relativeSpecifiers(text)
      .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts'))
      .filter((target) => known.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The import circles: strongly connected components of more than one file, or a file importing itself (Tarjan). */
export function importCircles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) circles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles;
}

/** The module a file belongs to: its folder under src/, or its own name for a file at the top (signature.ts -> signature). */
export function moduleOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file.replace(/\.ts$/, '') : file.slice(0, slash);
}

/** Every module-to-module import, with one file that makes it: "from -> to" -> "file imports target". */
export function moduleEdges(graph: ImportGraph): Map<string, string> {
  const edges = new Map<string, string>();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = moduleOf(file);
      const to = moduleOf(target);
      if (from !== to && !edges.has(`${from} -> ${to}`)) edges.set(`${from} -> ${to}`, `${file} imports ${target}`);
    }
  }
  return edges;
}
