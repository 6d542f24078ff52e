// Worker thread body: signs batches of JSON lines. One signer per distinct set of options is kept, so
// its permutations, buffers and token-hash memo are made once per thread.
import { createSigner, type Signer, type SignerOptions } from '../signature.js';
import { type LineFields, signLines, type SignedLines } from './sign-lines.js';

const signers = new Map<string, Signer>();

export interface SignTask {
  options: SignerOptions;
  fields: LineFields;
  lines: string[];
  firstLineNumber: number;
}

export default function signTask({ options, fields, lines, firstLineNumber }: SignTask): SignedLines {
  const key = JSON.stringify(options);
  let signer = signers.get(key);
  if (!signer) {
    signer = createSigner(options);
    signers.set(key, signer);
  }
  return signLines(signer, lines, firstLineNumber, fields);
}
