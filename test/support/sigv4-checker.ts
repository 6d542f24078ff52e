// Starts test/support/sigv4_check.py (botocore checking every request's AWS SigV4 signature, then passing it
// to a real cluster) for tests of near-dup's SigV4 signing, and finds the Python that has botocore:
// NEAR_DUP_BOTOCORE_PYTHON (what .ci/run sets after installing it), else python3, else a virtual environment
// of the tests' own under .engines/ with botocore installed from PyPI there (made once; the test command sets
// up what it needs, as it does the engines). Under CI=true a missing botocore is a failure, not a skip.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, 'sigv4_check.py');

/** Made-up credentials: what near-dup signs with (as AWS_*) and what the checker checks against. */
export const TEST_AWS = { accessKeyId: 'AKIDNEARDUPTESTKEY01', secretAccessKey: 'nd/Secret+Key=ForSigV4Tests', sessionToken: 'nd-session/token+==' } as const;

/** The environment that gives near-dup TEST_AWS through the AWS chain's first link (no profile, no metadata). */
export function awsEnv(base: NodeJS.ProcessEnv, secret: string = TEST_AWS.secretAccessKey): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, AWS_ACCESS_KEY_ID: TEST_AWS.accessKeyId, AWS_SECRET_ACCESS_KEY: secret, AWS_SESSION_TOKEN: TEST_AWS.sessionToken, AWS_EC2_METADATA_DISABLED: 'true' };
  delete env.AWS_PROFILE;
  return env;
}

const VENV = path.resolve(__dirname, '../../.engines/botocore-venv');

/** The Python that imports botocore (installing it into the tests' own virtual environment if need be), or why there is none. */
export function botocorePython(): { python?: string; missing?: string } {
  const python = process.env.NEAR_DUP_BOTOCORE_PYTHON || 'python3';
  const why = importsBotocore(python);
  if (why === undefined) return { python };
  if (process.env.NEAR_DUP_BOTOCORE_PYTHON) return { missing: `${python} cannot import botocore (${why}); pip install botocore there, or unset NEAR_DUP_BOTOCORE_PYTHON` };
  const own = ownBotocore();
  return typeof own === 'string' ? { python: own } : { missing: `${python} cannot import botocore (${why}), and installing it into ${VENV} failed (${own.failed}); pip install botocore, or set NEAR_DUP_BOTOCORE_PYTHON` };
}

/** Why `python` cannot import botocore, or undefined when it can. */
function importsBotocore(python: string): string | undefined {
  const probe = spawnSync(python, ['-c', 'import botocore; print(botocore.__version__)'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : (probe.stderr || probe.error?.message || '').trim().split('\n').pop();
}

/** The tests' own virtual environment's Python, with botocore installed from PyPI (made the first time). */
function ownBotocore(): string | { failed: string } {
  const python = path.join(VENV, 'bin', 'python');
  if (importsBotocore(python) === undefined) return python;
  for (const [command, args] of [['python3', ['-m', 'venv', '--copies', VENV]], [path.join(VENV, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', 'botocore']]] as const) {
    const step = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (step.status !== 0) return { failed: `${path.basename(command)} ${args[0]}: ${(step.stderr || step.error?.message || '').trim().split('\n').pop()}` };
  }
  return importsBotocore(python) === undefined ? python : { failed: 'botocore installed but not importable' };
}

export interface CheckerStats {
  checked: number;
  failed: number;
  failures: string[];
  /** "METHOD /path?query" of each request checked, in order. */
  requests: string[];
}

export interface RunningChecker {
  url: string;
  stats(): Promise<CheckerStats>;
  close(): void;
}

export interface CheckerOptions {
  python: string;
  upstream: string;
  ca?: string;
  region: string;
  service: 'es' | 'aoss';
  /** The user the checked requests go on as (the role an IAM identity maps to). */
  upstreamUser?: { username: string; password: string };
}

export async function startChecker(options: CheckerOptions): Promise<RunningChecker> {
  const args = [SCRIPT, '--upstream', options.upstream, '--region', options.region, '--service', options.service, ...(options.ca ? ['--ca', options.ca] : [])];
  const env = {
    ...process.env,
    NDSIG_ACCESS_KEY_ID: TEST_AWS.accessKeyId,
    NDSIG_SECRET_ACCESS_KEY: TEST_AWS.secretAccessKey,
    NDSIG_SESSION_TOKEN: TEST_AWS.sessionToken,
    NDSIG_UPSTREAM_USER: options.upstreamUser?.username ?? '',
    NDSIG_UPSTREAM_PASSWORD: options.upstreamUser?.password ?? '',
  };
  const child = spawn(options.python, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await listeningPort(child);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    stats: async () => (await (await fetch(`${url}/__sigv4/stats`)).json()) as CheckerStats,
    close: () => void child.kill('SIGTERM'),
  };
}

function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`the SigV4 checker did not start: ${err.trim()}`)), 20_000);
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      const match = /listening (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.stderr?.on('data', (chunk) => (err += chunk));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the SigV4 checker exited (${code}): ${err.trim()}`));
    });
  });
}
