// The family members' records gathered for the clusters' cut (member-records.ts, SignatureRecords.gatherMembers):
// the same signatures as read where they lie, read from a file of their own, and nothing left behind.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { SignatureRecords } from '../../src/jobs/dedup/scan/signature-table.js';
import { corpus } from '../support/dedup-corpus.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'nd-members-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('gathered family members', () => {
  for (const valueBits of [32, 16] as const) {
    it(`${valueBits}-bit records: find gives what it gave before the gather, for members (any batch) and others alike`, async () => {
      const docs = corpus(40, 6, 300, 50);
      const numbers = new DocNumbers();
      const spill = new SignatureRecords(numbers, { spillDir: scratch, valueBits });
      for (const d of docs) spill.addSignature(d.id, d.signature);
      try {
        const ids = docs.map((d) => d.id);
        // (Copied: what find gives are views of the reader's buffer, until its next read.)
        const copy = (s: { values: Uint32Array; bands: Int32Array; simhash: unknown }) => ({ values: s.values.slice(), bands: s.bands.slice(), simhash: s.simhash });
        const before = new Map([...(await spill.find(ids, ids.map((id) => numbers.find(id)!)))].map(([id, s]) => [id, copy(s)]));
        // Families: every third document, in groups of 2 to 5, out of slot order; the last document alone (the last word's bit).
        const chosen = ids.filter((_, i) => i % 3 === 0 || i === ids.length - 1).map((id) => numbers.find(id)!);
        const families: Int32Array[] = [];
        for (let k = 0; k < chosen.length; k += 2 + (k % 4)) families.push(Int32Array.from(chosen.slice(k, k + 2 + (k % 4))).reverse());
        expect(spill.gatherMembers(families)).toBe(true);
        expect(readdirSync(spill.path)).toContain('members.bin');
        const memberIds = chosen.map((n) => numbers.idOf(n));
        for (const batch of [memberIds, memberIds.slice(5, 17), [memberIds[memberIds.length - 1]], ids]) {
          const found = await spill.find(batch, batch.map((id) => numbers.find(id)!));
          expect(found.size).toBe(batch.length);
          for (const id of batch) expect(copy(found.get(id)!)).toEqual(before.get(id));
        }
      } finally {
        spill.close();
      }
      expect(readdirSync(scratch).filter((name) => name.includes(path.basename(spill.path)))).toEqual([]);
    });
  }
});
