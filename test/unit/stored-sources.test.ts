// An _mget answer read as text: each document's source is its own bytes, found by offsets whatever it holds
// (braces and quotes in strings, numbers beyond 2^53), a version beyond 2^53 kept as written, documents not
// found or not read told apart, and a refusal of the read said as the refusal of the whole request.
import { describe, expect, it } from 'vitest';
import { readStoredSources, storedSources } from '../../src/jobs/stored-sources.js';

const SOURCE = '{ "text" : "a } and a \\" and a {" ,"big":1234567890123456789,"one":1.0,"10":"ten","2":"two"}';

describe('storedSources', () => {
  it('gives each source as its text and its version as written, in the order asked', () => {
    const answer = `{"docs":[{"_index":"i","_id":"a","_version":1700000000000000255,"_seq_no":4,"_primary_term":2,"found":true,"_source":${SOURCE}},{"_index":"i","_id":"b","found":false}]}`;
    expect(storedSources(answer, 2)).toEqual([
      { found: true, source: SOURCE, version: '1700000000000000255', seqNo: 4, primaryTerm: 2 },
      { found: false },
    ]);
  });

  it('tells a document not read from one not found, and a found one without a source', () => {
    const answer = '{"docs":[{"_index":"i","_id":"a","error":{"type":"no_shard_available_action_exception","reason":"no shard"}},{"_index":"i","_id":"b","_version":1,"found":true}]}';
    expect(storedSources(answer, 2)).toEqual([{ found: false, error: 'no shard' }, { found: false, error: 'the engine keeps no _source for it' }]);
  });

  it('refuses an answer that is not the one asked for', () => {
    expect(() => storedSources('{"docs":[]}', 1)).toThrow(/_mget of 1 document /);
    expect(() => storedSources('<html>', 1)).toThrow(/begins "<html>"/);
  });
});

describe('readStoredSources', () => {
  it('says a refused read as the refusal of the whole request', async () => {
    const refusal = { type: 'security_exception', reason: 'action [indices:data/read/mget[shard]] is unauthorized for user [u]' };
    const client = { url: 'http://engine', requestText: async () => `{"docs":[{"_index":"i","_id":"a","error":${JSON.stringify(refusal)}}]}` };
    await expect(readStoredSources(client, [{ id: 'a', location: { index: 'i' } }])).rejects.toMatchObject({ statusCode: 403, refusal: { actions: ['indices:data/read/mget[shard]'] } });
  });
});
