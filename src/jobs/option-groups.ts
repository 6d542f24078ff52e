// The jobs that take their options in groups (annotate, ingest, dedup) check the keys given one way: a key
// the job would not read is refused rather than the run made without it, and a member outside its group
// (the flat names of near-dup 0.x: `pageSize` for `limits.pageSize`) is named with the group it goes in.
import { UsageError } from '../errors.js';

/**
 * What a job takes: its name in messages, its top-level keys and each group's members (records, so that
 * `satisfies Record<keyof Group, 1>` fails the build when a member is added to an interface and not here).
 */
export interface OptionKeys {
  job: string;
  topLevel: object;
  groups: Record<string, object>;
}

/**
 * Refuses a key the job does not read, naming the group it goes in, or else what the object it is in
 * takes. A key left undefined is no setting lost (a caller spreads what it has).
 *
 * @throws {UsageError} `minSimilarity: give it as compare.minSimilarity (dedup takes its options in groups: ...)`.
 */
export function checkOptionKeys(options: object, takes: OptionKeys): void {
  for (const key of Object.keys(given(options))) if (!Object.hasOwn(takes.topLevel, key)) refuseKey(key, takes.topLevel, 'it', takes);
  for (const [g, members] of Object.entries(takes.groups)) {
    for (const key of Object.keys(given((options as Record<string, object | undefined>)[g]))) if (!Object.hasOwn(members, key)) refuseKey(`${g}.${key}`, members, g, takes);
  }
}

function refuseKey(key: string, where: object, name: string, { job, groups }: OptionKeys): never {
  const member = key.slice(key.indexOf('.') + 1);
  const home = Object.keys(groups).find((g) => Object.hasOwn(groups[g], member));
  if (home) throw new UsageError(`${key}: give it as ${home}.${member} (${job} takes its options in groups: ${Object.keys(groups).join(', ')})`);
  throw new UsageError(`${key} is not an option of ${job}; ${name} takes ${Object.keys(where).join(', ')}`);
}

/** The members given (a member left undefined takes its default). */
export function given<G extends object>(group: G | undefined): G {
  return Object.fromEntries(Object.entries(group ?? {}).filter(([, value]) => value !== undefined)) as G;
}
