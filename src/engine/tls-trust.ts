// What TLS trusts and presents, for every request near-dup makes: the CA file, a CA pinned by its SHA-256
// fingerprint (what Elasticsearch prints at first start), and a client certificate for mutual TLS.
//
// A fingerprint is turned into a CA certificate once, before any request: the first node's certificate
// chain is read (without trusting it), the certificate of that fingerprint taken from it, and from then on
// that certificate is the CA every connection verifies against, chain and host name, as with --ca-file. So
// the official clients, the raw requests, the proxy and dashboards all check the same way, whichever flavour
// answers.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { UsageError, UserError } from '../errors.js';
import { EngineConnectionError } from './errors.js';

/** "AB:CD:..." (64 hex digits, any case, with or without colons) as upper-case pairs joined by colons; a UsageError otherwise. */
export function normalizeFingerprint(text: string): string {
  const hex = text.trim().replace(/^sha-?256\s*[:=]?\s*/i, '').replace(/[:\s]/g, '');
  if (!/^[0-9a-f]{64}$/i.test(hex)) {
    throw new UsageError(`--ca-fingerprint "${text.trim()}" is not a SHA-256 fingerprint: give the 64 hex digits (colons allowed) Elasticsearch printed at first start, or openssl x509 -fingerprint -sha256 -noout -in ca.pem`);
  }
  return hex.toUpperCase().match(/../g)!.join(':');
}

/** PEM text of a file given to an option, checked to hold what it must (`marker`, e.g. "CERTIFICATE"). */
export async function readPemFile(path: string, option: string, marker: string, noun = 'file'): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read the ${noun} ${path} given to ${option}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(err))}`);
  }
  if (!new RegExp(`-----BEGIN [A-Z ]*${marker}-----`).test(text)) {
    throw new UserError(`the ${noun} ${path} given to ${option} holds no PEM ${marker.toLowerCase()} (-----BEGIN ...${marker}-----)`);
  }
  return text;
}

/** A client certificate and its key, as PEM text, for clusters that ask for one. */
export interface ClientCertificate {
  cert: string;
  key: string;
}

/** The client certificate and its key, read and checked to belong together (a mismatch is said here, not as a TLS alert). */
export async function readClientCertificate(certFile: string | undefined, keyFile: string | undefined): Promise<ClientCertificate | undefined> {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) {
    throw new UsageError('give --client-cert and --client-key together (SEARCH_CLIENT_CERT and SEARCH_CLIENT_KEY): the certificate and its private key');
  }
  const cert = await readPemFile(certFile, '--client-cert', 'CERTIFICATE', 'client certificate');
  const key = await readPemFile(keyFile, '--client-key', 'PRIVATE KEY', 'client key');
  let matches: boolean;
  try {
    matches = new X509Certificate(cert).checkPrivateKey(createPrivateKey(key));
  } catch (err) {
    const encrypted = /ENCRYPTED|passphrase/i.test(key) || /passphrase/i.test((err as Error).message);
    throw new UserError(
      encrypted
        ? `the key in ${keyFile} (--client-key) is encrypted; give it unencrypted (openssl pkey -in ${keyFile} -out client.key), kept readable by you alone`
        : `cannot read the client certificate ${certFile} and key ${keyFile}: ${(err as Error).message}`,
    );
  }
  if (!matches) throw new UserError(`the key in ${keyFile} (--client-key) is not the key of the certificate in ${certFile} (--client-cert)`);
  return { cert, key };
}

interface PresentedCertificate {
  subject: string;
  fingerprint: string;
  pem: string;
}

/**
 * The CA certificate (PEM) of `fingerprint` from the chain the server at `nodeUrl` presents. The chain is
 * read without being trusted: what makes the certificate trusted is its fingerprint, checked here.
 */
export async function caFromFingerprint(nodeUrl: string, fingerprint: string, client: ClientCertificate | undefined, timeoutMs: number): Promise<string> {
  const url = new URL(nodeUrl);
  if (url.protocol !== 'https:') throw new UsageError(`--ca-fingerprint applies to an https:// URL, and ${nodeUrl} is plain HTTP: give the https:// URL, or leave --ca-fingerprint out`);
  const chain = await presentedChain(url, client, timeoutMs);
  const found = chain.find((c) => c.fingerprint === fingerprint);
  if (found) return found.pem;
  const seen = chain.map((c) => `${c.subject} (${c.fingerprint})`).join('; ');
  throw new UserError(
    `no certificate ${nodeUrl} presents has the SHA-256 fingerprint ${fingerprint} given to --ca-fingerprint (it presented: ${seen || 'none'}); ` +
      'check the fingerprint (Elasticsearch prints its CA\'s at first start), or give the CA certificate itself with --ca-file if the server does not send it in its chain',
  );
}

function presentedChain(url: URL, client: ClientCertificate | undefined, timeoutMs: number): Promise<PresentedCertificate[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host, port, servername: isIP(host) ? undefined : host, rejectUnauthorized: false, cert: client?.cert, key: client?.key, timeout: timeoutMs }, () => {
      const chain = chainOf(socket.getPeerCertificate(true));
      socket.end();
      resolve(chain);
    });
    socket.on('timeout', () => socket.destroy(Object.assign(new Error(`no TLS handshake within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    socket.on('error', (err: NodeJS.ErrnoException) => reject(new EngineConnectionError(err.message, err.code, url.origin, { cause: err })));
  });
}

/** The certificates of a peer chain, leaf first, each once (a self-signed root is its own issuer). */
function chainOf(leaf: tls.DetailedPeerCertificate): PresentedCertificate[] {
  const out: PresentedCertificate[] = [];
  const seen = new Set<string>();
  for (let cert: tls.DetailedPeerCertificate | undefined = leaf; cert?.raw && !seen.has(cert.fingerprint256); cert = cert.issuerCertificate) {
    seen.add(cert.fingerprint256);
    const x509 = new X509Certificate(cert.raw);
    out.push({ subject: x509.subject.replace(/\n/g, ', '), fingerprint: x509.fingerprint256, pem: x509.toString() });
  }
  return out;
}
