// Amazon OpenSearch Serverless answers only part of the OpenSearch API: the operations AWS lists under
// "Supported operations and plugins in Amazon OpenSearch Serverless" and "Using PIT with Amazon OpenSearch
// Serverless" in the Amazon OpenSearch Service developer guide (indices, mappings and settings, documents,
// bulk, search, count, msearch, mget, point in time, aliases and index templates). Any other request near-dup
// would make there is refused before it is sent, in one line naming the operation, rather than met as an
// engine error midway through a job. What near-dup can do without is not asked at all (see client.ts): GET /
// (the collection is OpenSearch 2.x), refresh (Serverless makes writes searchable by itself), nodes info; and
// what it can do otherwise is done so: whole-index reads use a point in time instead of scroll (scan.ts).
import { UserError } from '../errors.js';

/** method list, and the path (without the query string, segments still encoded) each supported operation has. */
const SUPPORTED: ReadonlyArray<[RegExp, RegExp]> = [
  // aoss:DescribeIndex, CreateIndex, DeleteIndex, UpdateIndex
  [/^(GET|HEAD|PUT|DELETE)$/, /^\/[^_/][^/]*$/],
  [/^(GET|PUT|POST)$/, /^(\/[^_/][^/]*)?\/_mappings?$/],
  [/^(GET|PUT)$/, /^\/[^_/][^/]*\/_settings?(\/[^/]+)?$/],
  [/^GET$/, /^\/_cat\/(indices|aliases)(\/[^/]+)?$/],
  [/^GET$/, /^\/_resolve\/index\/[^/]+$/],
  // aoss:WriteDocument
  [/^(POST|PUT)$/, /^(\/[^_/][^/]*)?\/_bulk$/],
  [/^(GET|PUT|POST|DELETE)$/, /^\/[^_/][^/]*\/(_doc|_create|_update|_source|_explain)(\/[^/]+)?$/],
  // aoss:ReadDocument, and point in time
  [/^(GET|POST)$/, /^(\/[^_/][^/]*)?\/(_search|_msearch|_count|_mget|_field_caps|_analyze)$/],
  [/^POST$/, /^\/[^_/][^/]*\/_search\/point_in_time$/],
  [/^(GET|DELETE)$/, /^\/_search\/point_in_time(\/_all)?$/],
  // aoss:*CollectionItems: aliases and index templates
  [/^(GET|HEAD|PUT|POST|DELETE)$/, /^\/_index_template(\/[^/]+)?$/],
  [/^(GET|POST)$/, /^\/_aliases?$/],
  [/^(GET|PUT|DELETE)$/, /^\/[^_/][^/]*\/_alias(es)?(\/[^/]+)?$/],
];

/** What a request is, for the message: near-dup's words for the operations it uses that Serverless lacks. */
function operationName(method: string, path: string, query: Record<string, unknown> | undefined): string {
  if (path.startsWith('/_search/scroll') || query?.scroll !== undefined) return 'scroll';
  if (/\/_refresh$/.test(path)) return 'refresh';
  if (path.startsWith('/_nodes')) return 'nodes info';
  if (path.startsWith('/_component_template')) return 'component templates';
  if (/\/_stats$/.test(path)) return 'index stats';
  if (/\/_pit$/.test(path) || path === '/_pit') return "Elasticsearch's point in time";
  if (path === '/' || path === '') return 'the cluster information API (GET /)';
  return `${method} ${path.split('/').slice(0, 3).join('/')}`;
}

/** Where each missing operation leaves the user. */
const WAY_OUT: Record<string, string> = {
  scroll:
    "Serverless has no scroll, which a sliced scan (--slices) and explore's member pages take; run without --slices (whole-index reads use a point in time there), or run this on a managed domain (--aws-service es) or a self-managed cluster",
  'component templates': 'give the fields to each index with near-dup init --index INDEX instead of --template',
  'index stats': 'leave out the option that needs it',
};

/** Throws a one-line UserError when Amazon OpenSearch Serverless has no such operation. */
export function requireServerlessOperation(method: string, path: string, query?: Record<string, unknown>): void {
  const bare = path.split('?')[0];
  const scroll = query?.scroll !== undefined || /[?&]scroll=/.test(path);
  if (!scroll && SUPPORTED.some(([methods, paths]) => methods.test(method) && paths.test(bare))) return;
  const operation = operationName(method, bare, scroll ? { scroll: true } : query);
  const way = WAY_OUT[operation] ?? 'this command cannot run on Serverless; run it on a managed domain (--aws-service es) or a self-managed cluster';
  throw new UserError(`Amazon OpenSearch Serverless does not support ${operation} (${method} ${bare}${scroll ? '?scroll=...' : ''}), which near-dup needs here; ${way}`);
}

/** Whether Serverless supports the request (for optional requests that are then left out). */
export function serverlessSupports(method: string, path: string, query?: Record<string, unknown>): boolean {
  try {
    requireServerlessOperation(method, path, query);
    return true;
  } catch {
    return false;
  }
}
