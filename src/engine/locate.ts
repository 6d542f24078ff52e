// Which cluster a command talks to when no URL is given. An explicit --url (or SEARCH_URL) always wins;
// without one, the local ports that docker-compose.yml and scripts/engine use are tried, then the usual
// localhost:9200. The ports are those of the engine support table (support.json), which scripts/engine and
// the test harness (test/setup/engines.ts) read too.
import { UserError } from '../errors.js';
import type { ResolvedConnection } from './connection.js';
import { type Flavour, httpGet } from './detect.js';
import { majorsOf } from './support.js';

/** Where `docker compose up` and `npm run engine:start` put each flavour's main engine (the one named after it). */
export const LOCAL_ENGINE_URLS: Readonly<Record<Flavour, string>> = Object.freeze({
  opensearch: localEngineUrl('opensearch'),
  elasticsearch: localEngineUrl('elasticsearch'),
});

function localEngineUrl(flavour: Flavour): string {
  const main = majorsOf(flavour).find((m) => m.engine.name === flavour);
  if (!main) throw new Error(`engine/support.json names no engine "${flavour}"`);
  return `http://127.0.0.1:${main.engine.port}`;
}

/** Tried in this order when no URL is given. */
export const LOCAL_URL_CANDIDATES: readonly string[] = [LOCAL_ENGINE_URLS.opensearch, LOCAL_ENGINE_URLS.elasticsearch, 'http://localhost:9200'];

/** Whether anything HTTP answers at the URL (any status: a 401 still means a cluster is there). */
export async function answers(url: string, timeoutMs = 1500): Promise<boolean> {
  const probe: ResolvedConnection = { url, nodes: [url], insecure: true, requestTimeoutMs: timeoutMs, maxRetries: 0 };
  try {
    await httpGet(probe, '/', timeoutMs);
    return true;
  } catch {
    return false;
  }
}

/** The first local candidate that answers, or undefined. */
export async function findLocalEngine(candidates: readonly string[] = LOCAL_URL_CANDIDATES): Promise<string | undefined> {
  for (const url of candidates) if (await answers(url)) return url;
  return undefined;
}

/** The URL to use: the explicit one, else a local engine that answers, else a UserError saying what to do. */
export async function chooseUrl(explicit: string | undefined, onChosen?: (url: string) => void): Promise<string> {
  if (explicit !== undefined && explicit.trim() !== '') return explicit;
  const found = await findLocalEngine();
  if (found === undefined) {
    throw new UserError(
      `no cluster given and none answers at ${LOCAL_URL_CANDIDATES.join(', ')}; give --url (or SEARCH_URL), ` +
        `or start a local one: docker compose up -d, or npm run engine:start`,
    );
  }
  onChosen?.(found);
  return found;
}
