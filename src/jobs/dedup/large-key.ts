// A band key held by more documents than one bucket verifies at once (boilerplate, a template, thousands
// of copies of one text): its documents are verified a chunk at a time, in the order given, each chunk
// together with one representative of every cluster found so far in this key (up to 200). Copies and
// near-copies of any number join one cluster; two documents of different chunks that match neither's
// representative are left to their other keys (see PairVerifier.decidedEarlier).
import type { PairVerifier, Signatures } from './pair-verifier.js';
import type { StoredSignature } from './signature-store.js';

/** Clusters of one large band key carried from chunk to chunk, one representative each. */
const MAX_REPRESENTATIVES = 200;

/** Reads the signatures of a chunk and its representatives. */
export type SignatureSource = (ids: string[]) => Promise<Signatures>;

export class LargeKeyJoin {
  private representatives: string[] = [];
  private chunk: string[] = [];
  private readonly maxRepresentatives: number;
  /** The signatures handed in with the members (when there is no source): the chunk's and the representatives'. */
  private readonly held = new Map<string, StoredSignature>();

  /** Without `source`, each member comes with its signature. */
  constructor(
    private readonly verifier: PairVerifier,
    private readonly band: number,
    private readonly chunkSize: number,
    private readonly source?: SignatureSource,
  ) {
    this.maxRepresentatives = Math.min(MAX_REPRESENTATIVES, Math.floor(chunkSize / 2));
  }

  async add(id: string, signature?: StoredSignature): Promise<void> {
    this.chunk.push(id);
    if (signature) this.held.set(id, signature);
    if (this.representatives.length + this.chunk.length >= this.chunkSize) await this.verifyChunk();
  }

  async finish(): Promise<void> {
    if (this.chunk.length > 0) await this.verifyChunk();
  }

  private async verifyChunk(): Promise<void> {
    const ids = [...this.representatives, ...this.chunk];
    this.verifier.verifyBucket(ids, this.source ? await this.source(ids) : this.held, { band: this.band });
    const clusters = this.verifier.clusters;
    const byCluster = new Map<string, string>();
    for (const id of ids) {
      const root = clusters.find(id);
      if (!byCluster.has(root)) byCluster.set(root, id);
    }
    // Clusters before single documents (which may still match something later), each in the order met.
    const found = [...byCluster.values()];
    this.representatives = [...found.filter((id) => clusters.sizeOf(id) > 1), ...found.filter((id) => clusters.sizeOf(id) === 1)].slice(0, this.maxRepresentatives);
    this.chunk = [];
    if (!this.source) {
      const kept = new Set(this.representatives);
      for (const id of this.held.keys()) if (!kept.has(id)) this.held.delete(id);
    }
  }
}
