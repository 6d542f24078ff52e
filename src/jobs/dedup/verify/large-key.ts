// A band key held by more documents than one bucket verifies at once (boilerplate, a template, thousands
// of copies of one text): its documents are verified a chunk at a time, in the order given, each chunk
// together with one representative of every cluster found so far in this key (up to 200). Copies and
// near-copies of any number join one cluster; two documents of different chunks that match neither's
// representative are left to their other keys (see PairVerifier.decidedEarlier). Members go by their
// numbers in the verifier's numbering, each with its signature: no id is read.
import type { PairVerifier } from './pair-verifier.js';
import type { StoredSignature } from '../documents/signature-store.js';

/** Clusters of one large band key carried from chunk to chunk, one representative each. */
const MAX_REPRESENTATIVES = 200;

interface Member {
  n: number;
  signature: StoredSignature;
}

/**
 * The documents of one large band key verified a chunk at a time, each chunk with a representative of every cluster
 * found so far in the key, so that copies of any number join one cluster.
 */
export class LargeKeyJoin {
  private representatives: Member[] = [];
  private chunk: Member[] = [];
  private readonly maxRepresentatives: number;

  constructor(
    private readonly verifier: PairVerifier,
    private readonly band: number,
    private readonly chunkSize: number,
  ) {
    this.maxRepresentatives = Math.min(MAX_REPRESENTATIVES, Math.floor(chunkSize / 2));
  }

  /** Document number n (in the verifier's numbering), with its signature. */
  add(n: number, signature: StoredSignature): void {
    this.chunk.push({ n, signature });
    if (this.representatives.length + this.chunk.length >= this.chunkSize) this.verifyChunk();
  }

  /**
   * Copies the signatures it holds (the representatives, the chunk not yet verified): the buffers they are
   * views of are about to be read into again (the key's members come in several loads).
   */
  detach(): void {
    const copy = (m: Member): Member => ({ n: m.n, signature: { values: m.signature.values.slice(), simhash: m.signature.simhash, bands: m.signature.bands.slice() } });
    this.representatives = this.representatives.map(copy);
    this.chunk = this.chunk.map(copy);
  }

  finish(): void {
    if (this.chunk.length > 0) this.verifyChunk();
  }

  private verifyChunk(): void {
    const members = [...this.representatives, ...this.chunk];
    this.verifier.verifyMembersOf({ numbers: members.map((m) => m.n), signatures: members.map((m) => m.signature) }, this.band);
    const clusters = this.verifier.clusters;
    const byCluster = new Map<number, Member>();
    for (const member of members) {
      const root = clusters.rootOf(member.n);
      if (!byCluster.has(root)) byCluster.set(root, member);
    }
    // Clusters before single documents (which may still match something later), each in the order met.
    const found = [...byCluster.values()];
    const joined = (m: Member) => clusters.joinedNumber(m.n);
    this.representatives = [...found.filter(joined), ...found.filter((m) => !joined(m))].slice(0, this.maxRepresentatives);
    this.chunk = [];
  }
}
