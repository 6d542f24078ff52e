// New indices get their mapping from the one composable index template that matches their name with the
// highest priority. A data stream makes a new backing index at each rollover, from its own template, so
// mapping the near-dup fields into today's backing indices is not enough: left to dynamic mapping in the
// next one, the MinHash becomes a text field and the band keys analyzed text, and that index can no longer
// be given the fields. So the fields go into a component template that the stream's template is composed
// of. And a template near-dup installs for a pattern can lose to another one of higher priority: that is
// found and said, rather than reported as done.
import { UserError } from '../errors.js';
import type { HttpMethod } from '../engine/client.js';
import { wildcardMatch } from './source-filter.js';
import { componentTemplateBody, componentTemplateName, DEFAULT_PREFIX, DEFAULT_TEMPLATE_NAME } from './mapping.js';

/** The requests this needs: EngineClient, or the proxy's requests made with each client's own credentials. */
export interface TemplateAccess {
  request<T = unknown>(method: HttpMethod, path: string, body?: unknown): Promise<T>;
}

interface IndexTemplate {
  index_patterns?: string[] | string;
  priority?: number;
  composed_of?: string[];
  data_stream?: unknown;
  _meta?: { managed?: boolean; [key: string]: unknown };
  [key: string]: unknown;
}

interface NamedTemplate {
  name: string;
  index_template: IndexTemplate;
}

/** What an index template body may hold when it is PUT back (GET adds read-only fields, e.g. dates). */
const TEMPLATE_KEYS = ['index_patterns', 'template', 'composed_of', 'priority', 'version', '_meta', 'data_stream', 'allow_auto_create', 'ignore_missing_component_templates', 'deprecated'];

/** The component template that holds the near-dup fields of a prefix. */
export function fieldsComponentName(prefix: string): string {
  return prefix === DEFAULT_PREFIX ? componentTemplateName(DEFAULT_TEMPLATE_NAME) : `${componentTemplateName(DEFAULT_TEMPLATE_NAME)}-${prefix}`;
}

/** Every composable index template. */
async function indexTemplates(access: TemplateAccess): Promise<NamedTemplate[]> {
  return (await access.request<{ index_templates?: NamedTemplate[] }>('GET', '/_index_template')).index_templates ?? [];
}

function patternsOf(template: IndexTemplate): string[] {
  const p = template.index_patterns;
  return typeof p === 'string' ? [p] : (p ?? []);
}

/** The template that gives a new index named `name` its mapping: the highest priority one matching it. */
export function governingTemplate(templates: readonly NamedTemplate[], name: string): NamedTemplate | undefined {
  const matching = templates.filter((t) => patternsOf(t.index_template).some((p) => wildcardMatch(p, name)));
  return matching.sort((a, b) => (b.index_template.priority ?? 0) - (a.index_template.priority ?? 0))[0];
}

/** Whether a new index of this name would be a data stream (the template that governs it makes streams). */
export async function governedByStreamTemplate(access: TemplateAccess, name: string): Promise<boolean> {
  const governing = governingTemplate(await indexTemplates(access), name);
  return governing?.index_template.data_stream !== undefined && governing.index_template.data_stream !== null;
}

/** What `init` did to one data stream's index template. */
export interface StreamTemplateResult {
  stream: string;
  template: string;
  /** added: the component template was added to the stream's template; present: it already was. */
  action: 'added' | 'present';
}

/**
 * Makes the template of each data stream compose the near-dup fields, so that every backing index a
 * rollover makes has them. A template the engine manages (built in) is not changed: the user is told
 * what to do instead.
 */
export async function composeIntoStreamTemplates(access: TemplateAccess, streams: readonly string[], prefix: string): Promise<StreamTemplateResult[]> {
  if (streams.length === 0) return [];
  const component = fieldsComponentName(prefix);
  await access.request('PUT', `/_component_template/${encodeURIComponent(component)}`, componentTemplateBody(prefix));
  const templates = await indexTemplates(access);
  const results: StreamTemplateResult[] = [];
  for (const stream of streams) {
    const governing = governingTemplate(templates, stream);
    if (!governing) throw new UserError(`no index template matches the data stream "${stream}", so its next backing index cannot be given the near-dup fields; add the component template "${component}" to the template you create it with`);
    const body = governing.index_template;
    if (body.composed_of?.includes(component)) {
      results.push({ stream, template: governing.name, action: 'present' });
      continue;
    }
    if (body._meta?.managed === true) {
      throw new UserError(
        `the data stream "${stream}" takes its mappings from "${governing.name}", a template the engine manages; near-dup does not change it. ` +
          `Put the near-dup fields into its custom component template (for example PUT _component_template/${stream.split('-')[0]}@custom with the body of _component_template/${component}), or give the stream a template of your own composed of "${component}"`,
      );
    }
    const kept = Object.fromEntries(Object.entries(body).filter(([key]) => TEMPLATE_KEYS.includes(key)));
    await access.request('PUT', `/_index_template/${encodeURIComponent(governing.name)}`, { ...kept, composed_of: [...(body.composed_of ?? []), component] });
    governing.index_template = { ...body, composed_of: [...(body.composed_of ?? []), component] };
    results.push({ stream, template: governing.name, action: 'added' });
  }
  return results;
}

/**
 * Templates that win over `ours` for some of its patterns (a higher priority and an overlapping pattern),
 * so that indices made there would not get the fields: each with a pattern of ours it takes.
 */
export async function templatesWinningOver(access: TemplateAccess, ours: string, patterns: readonly string[], priority: number): Promise<Array<{ name: string; priority: number; pattern: string }>> {
  const winners: Array<{ name: string; priority: number; pattern: string }> = [];
  for (const t of await indexTemplates(access)) {
    if (t.name === ours || (t.index_template.priority ?? 0) <= priority) continue;
    const theirs = patternsOf(t.index_template);
    // Patterns overlap when one matches the other taken as a name (a sample of the names both can take).
    const pattern = patterns.find((p) => theirs.some((q) => wildcardMatch(q, p.replace(/\*/g, 'x')) || wildcardMatch(p, q.replace(/\*/g, 'x'))));
    if (pattern) winners.push({ name: t.name, priority: t.index_template.priority ?? 0, pattern });
  }
  return winners;
}
