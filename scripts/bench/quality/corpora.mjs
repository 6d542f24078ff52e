// The labelled corpora of bench:quality, each a list of { id, family, text }: the family is the truth by
// provenance (the documents that are versions of one thing). The templated corpus is built here
// (templated.mjs); the others are the project's existing benchmark corpora, labelled:
//  - licences: each SPDX licence and its seeded versions (corpus.mjs licenseCorpus): the family is the licence;
//  - news: the news-like articles (news-corpus.mjs newsCorpus): the family is an article and its syndicated
//    copies (newsCorpus does not name a copy's source: it is found again below, exactly);
//  - pep: the PEP revisions when the file is here (NEAR_DUP_CORPUS or ../shared/corpora): the family is the PEP;
//  - awscli: a second templated corpus, the AWS CLI reference pages of three releases (awscli.mjs), asked for
//    by name: its first build installs three awscli releases and renders their pages, about 7 minutes.
import { existsSync } from 'node:fs';
import { DEFAULT_CORPUS, licenseCorpus, loadCorpus, shuffled } from '../corpus.mjs';
import { newsCorpus } from '../news-corpus.mjs';
import { awscliCorpus } from './awscli.mjs';
import { templatedCorpus } from './templated.mjs';

export const CORPUS_NAMES = ['templated', 'licences', 'news', 'pep', 'awscli'];
/** The corpora measured when none is named. */
export const DEFAULT_CORPORA = ['templated', 'licences', 'news', 'pep'];

/** The corpus of that name, or a sentence saying why it is not here. */
export async function corpus(name, cache) {
  switch (name) {
    case 'templated':
      return templatedCorpus(cache);
    case 'awscli':
      return awscliCorpus(cache);
    case 'licences':
      return licenseCorpus().map((d) => ({ id: d.id, family: `licence:${d.pep}`, text: d.text }));
    case 'news':
      return newsWithSources(newsCorpus());
    case 'pep': {
      const file = process.env.NEAR_DUP_CORPUS ?? DEFAULT_CORPUS;
      if (!existsSync(file)) return `no PEP revisions at ${file} (set NEAR_DUP_CORPUS to the .jsonl.gz)`;
      return (await loadCorpus(file)).map((d) => ({ id: d.id, family: `pep:${d.pep}`, text: d.text }));
    }
    default:
      throw new Error(`unknown corpus "${name}"; valid: ${CORPUS_NAMES.join(', ')}`);
  }
}

const CREDIT = '\n\n(Reporting by ';

/**
 * The news articles, each copy in its source's family. newsCorpus makes a copy from an earlier document's
 * words (split on ' '), changes up to 7 of them in place and appends a credit line: the source is the earlier
 * document with as many words that differs in the fewest places (at most 7).
 */
export function newsWithSources(docs) {
  const byLength = new Map();
  const family = [];
  for (const [i, d] of docs.entries()) {
    const cut = d.text.lastIndexOf(CREDIT);
    let source;
    if (cut > 0) {
      const words = d.text.slice(0, cut).split(' ');
      let fewest = 8;
      for (const j of byLength.get(words.length) ?? []) {
        const other = docs[j].words;
        let differ = 0;
        for (let k = 0; k < words.length && differ < fewest; k++) if (words[k] !== other[k]) differ++;
        if (differ < fewest) [source, fewest] = [j, differ];
      }
    }
    family.push(source === undefined ? `news:${d.id}` : family[source]);
    d.words = d.text.split(' ');
    if (!byLength.has(d.words.length)) byLength.set(d.words.length, []);
    byLength.get(d.words.length).push(i);
  }
  return docs.map((d, i) => ({ id: d.id, family: family[i], text: d.text }));
}

/**
 * At most `limit` documents, whole families taken in a seeded order; then the documents in a seeded order
 * (so that one family's versions are not ingested side by side).
 */
export function limited(docs, limit) {
  let chosen = docs;
  if (limit && limit < docs.length) {
    const families = new Map();
    for (const d of docs) {
      if (!families.has(d.family)) families.set(d.family, []);
      families.get(d.family).push(d);
    }
    chosen = [];
    for (const name of shuffled([...families.keys()].sort(), 7)) {
      if (chosen.length >= limit) break;
      chosen.push(...families.get(name));
    }
  }
  return shuffled(chosen, 42);
}

