// Which index a write goes to, decided as the engine decides it, and whether the proxy signs for it. The rule:
//
// 1. The name is read as the engine reads it (raw-path.ts for paths and query strings, bulk-items.ts for
//    action lines). A name with date math is resolved by the proxy (date-math.ts) and the request is sent
//    on with the resolved name in its place, so the engine writes where the proxy decided even across a
//    midnight; one the proxy cannot resolve exactly is undecided.
// 2. A name no index or alias can have (`*`, `,`, `_all`, `:`, a leading `-`...) is refused by the engine:
//    the write goes on unsigned, for the engine to answer.
// 3. A name --index matches is signed, when --index leaves nothing out (without a `-pattern`, matching
//    the name is enough: whatever it is, the index it writes to is covered through it; a hidden index a
//    wildcard matches by name is signed too, the proxy does not ask).
// 4. Otherwise the proxy asks the cluster what the name is (GET /_resolve/index/{name}) and finds the index
//    the write lands in: an index itself; an alias's write index (GET /{alias}/_alias: the one with
//    is_write_index, or its only index); a data stream's newest backing index; for a name that does not
//    exist yet, the index the write creates, with the aliases its template gives it (POST
//    /_index_template/_simulate_index/{name}, else the legacy templates of GET /_template). The write is
//    signed when --index covers that index by its name, an alias of it, or its data stream (see
//    index-pattern.ts); otherwise it goes on as one for other indices. An alias with no write index is
//    refused by the engine: other.
// 5. When the cluster does not say (the client's credentials may not view the index, the cluster is away),
//    the write is undecided: refused with the reason under --on-error reject, sent on unsigned and counted
//    as passed under pass. Templates the credentials may not read are said once on stderr, and a new
//    index is then judged by its own name.
//
// The lookups go with the client's own Authorization (the proxy has no credentials), over the proxy's
// connections to the cluster; an answer is kept for a few seconds and shared by every client: it says
// what the cluster holds, and each client's write is still authorized by the engine with its own
// credentials. An alias moved to another write index, or a rollover, is seen within those seconds.
import { EngineResponseError } from '../engine/errors.js';
import { headerValue, type Upstream, upstreamJson } from './forward.js';
import { redactSecret } from '../engine/url.js';
import { isDateMathName, readDateMath } from './date-math.js';
import type { CoveredIndex, IndexMatcher } from './index-pattern.js';

/** Where a write goes: `index` the name it is sent to (date math resolved); `rewritten` when that differs from the name the client gave. */
export type Target = { kind: 'signed' | 'other'; index: string; rewritten: boolean } | { kind: 'undecided'; reason: string };

/** The index a write lands in, whether it is hidden, and its aliases and data stream. */
type Landing = CoveredIndex;

/** How long an answer of the cluster is kept. */
const KEEP_MS = 5_000;
/** A failed lookup is tried again after this long. */
const RETRY_MS = 1_000;
const MAX_KEPT = 10_000;
/** Characters no index or alias name may hold (the engines' validateIndexOrAliasName). */
const INVALID_CHARS = /[\\/*?"<>| ,#:]/;

/**
 * Which index each write lands in, and whether the proxy signs for it, found as the file header says and kept a few
 * seconds.
 */
export class WriteTargets {
  private readonly kept = new Map<string, { until: number; landing: Promise<Landing | undefined> }>();
  private templatesWarned = false;
  /** Lookups made, and those that failed. */
  lookups = 0;
  failedLookups = 0;

  constructor(
    private readonly upstream: Upstream,
    private readonly matches: IndexMatcher,
    private readonly warn: (line: string) => void,
  ) {}

  /** Where a write to `name` goes; `clientHeaders` for the client's credentials, should the cluster be asked. */
  async decide(name: string, clientHeaders: readonly string[], now = Date.now()): Promise<Target> {
    let index = name;
    if (isDateMathName(name)) {
      const outcome = readDateMath(name, now);
      if (!('name' in outcome)) {
        const why = 'refused' in outcome ? `the engines refuse it: ${outcome.refused}` : `near-dup cannot resolve ${outcome.unsupported} exactly`;
        return { kind: 'undecided', reason: `near-dup cannot tell which index "${name}" names (${why})` };
      }
      index = outcome.name;
    }
    const rewritten = index !== name;
    if (!isWritableName(index)) return { kind: 'other', index, rewritten };
    if (!this.matches.excludes && this.matches(index)) return { kind: 'signed', index, rewritten };
    const authorization = headerValue(clientHeaders, 'authorization');
    let landing: Landing | undefined;
    try {
      landing = await this.landing(index, authorization);
    } catch (err) {
      const message = redactSecret((err as Error).message, authorization);
      return { kind: 'undecided', reason: `near-dup could not tell which index a write to "${index}" lands in (an alias or data stream may lead to an index it signs for): ${message}` };
    }
    const signed = landing !== undefined && this.matches.covers(landing);
    return { kind: signed ? 'signed' : 'other', index, rewritten };
  }

  /** What the cluster says a write to `name` lands in, kept a few seconds; undefined when the engine will refuse it (an alias without a write index). */
  private landing(name: string, authorization: string | undefined): Promise<Landing | undefined> {
    const now = Date.now();
    const known = this.kept.get(name);
    if (known && known.until > now) return known.landing;
    if (this.kept.size >= MAX_KEPT) this.kept.clear();
    const headers = authorization ? ['authorization', authorization] : [];
    const landing = this.lookUp(name, headers);
    const entry = { until: now + KEEP_MS, landing };
    this.kept.set(name, entry);
    landing.catch(() => {
      entry.until = Date.now() + RETRY_MS;
    });
    return landing;
  }

  private async lookUp(name: string, headers: string[]): Promise<Landing | undefined> {
    this.lookups++;
    const json = (method: string, path: string) => upstreamJson(this.upstream, method, path, undefined, headers);
    const encoded = encodeURIComponent(name);
    let resolved: ResolveAnswer;
    try {
      resolved = (await json('GET', `/_resolve/index/${encoded}?expand_wildcards=all`)) as ResolveAnswer;
    } catch (err) {
      if (err instanceof EngineResponseError && err.statusCode === 404 && err.type === 'index_not_found_exception') return this.newIndex(name, headers);
      this.failedLookups++;
      throw err;
    }
    const index = resolved.indices?.find((i) => i.name === name);
    if (index) return { index: name, hidden: index.attributes?.includes('hidden') ?? false, through: [...(index.aliases ?? []), ...(index.data_stream ? [index.data_stream] : [])] };
    const stream = resolved.data_streams?.find((d) => d.name === name);
    if (stream) {
      const backing = stream.backing_indices ?? [];
      const write = backing[backing.length - 1];
      // The newest backing index is the write index; hidden, as backing indices are.
      return write ? { index: write, hidden: true, through: [name] } : undefined;
    }
    if (resolved.aliases?.some((a) => a.name === name)) {
      try {
        return writeIndexOf(name, (await json('GET', `/${encoded}/_alias`)) as AliasAnswer);
      } catch (err) {
        this.failedLookups++;
        throw err;
      }
    }
    // Resolved to nothing by that name (it would have said 404): a write creates it.
    return this.newIndex(name, headers);
  }

  /** A name that does not exist: the index a write makes of it, with the aliases its template gives. */
  private async newIndex(name: string, headers: string[]): Promise<Landing> {
    // No index is made of a name in upper case: the engine refuses the write.
    if (name !== name.toLowerCase()) return { index: name, hidden: false, through: [] };
    const aliases = await this.templateAliases(name, headers).catch((err: Error) => {
      if (!this.templatesWarned) {
        this.templatesWarned = true;
        this.warn(`cannot read the index templates (${redactSecret(err.message, headerValue(headers, 'authorization'))}; a client's credentials may lack manage_index_templates): a new index is judged by its own name, not by the aliases a template may give it`);
      }
      return [];
    });
    return { index: name, hidden: false, through: aliases.map((a) => a.replaceAll('{index}', name)) };
  }

  private async templateAliases(name: string, headers: string[]): Promise<string[]> {
    const simulated = (await upstreamJson(this.upstream, 'POST', `/_index_template/_simulate_index/${encodeURIComponent(name)}`, undefined, headers)) as { template?: { aliases?: Record<string, unknown> } };
    if (simulated.template) return Object.keys(simulated.template.aliases ?? {});
    // No composable template: the legacy ones that match all apply.
    const legacy = await this.legacy(headers);
    return legacy.filter((t) => t.patterns.some((p) => simpleMatch(p, name))).flatMap((t) => t.aliases);
  }

  private async legacy(headers: string[]): Promise<LegacyTemplate[]> {
    const answer = (await upstreamJson(this.upstream, 'GET', '/_template?filter_path=*.index_patterns,*.aliases', undefined, headers)) ?? {};
    return Object.values(answer as Record<string, { index_patterns?: string[]; aliases?: Record<string, unknown> }>).map((t) => ({ patterns: t.index_patterns ?? [], aliases: Object.keys(t.aliases ?? {}) }));
  }
}

interface LegacyTemplate {
  patterns: string[];
  aliases: string[];
}

interface ResolveAnswer {
  indices?: Array<{ name: string; aliases?: string[]; attributes?: string[]; data_stream?: string }>;
  aliases?: Array<{ name: string; indices?: string[] }>;
  data_streams?: Array<{ name: string; backing_indices?: string[] }>;
}

type AliasAnswer = Record<string, { aliases?: Record<string, { is_write_index?: boolean }> }>;

/** The index an alias writes to: the one it marks is_write_index, or its only index unless marked false; undefined when none (the engine refuses the write). */
export function writeIndexOf(alias: string, answer: AliasAnswer): Landing | undefined {
  const holders = Object.entries(answer).filter(([, v]) => v.aliases?.[alias] !== undefined);
  const marked = holders.find(([, v]) => v.aliases?.[alias]?.is_write_index === true);
  const only = holders.length === 1 && holders[0][1].aliases?.[alias]?.is_write_index !== false ? holders[0] : undefined;
  const write = marked ?? only;
  if (!write) return undefined;
  return { index: write[0], hidden: false, through: Object.keys(write[1].aliases ?? {}) };
}

/** A name some index or alias could have (the engines' rules, upper case aside: an alias may have it). */
export function isWritableName(name: string): boolean {
  if (name === '' || name === '.' || name === '..' || INVALID_CHARS.test(name) || /^[_\-+]/.test(name)) return false;
  return Buffer.byteLength(name) <= 255;
}

/** The engines' simple match of a template pattern (`*` any run of characters). */
function simpleMatch(pattern: string, name: string): boolean {
  return new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's').test(name);
}
