// A throwaway Python virtual environment with the peer libraries, made once under the system temp
// folder (or NEAR_DUP_BENCH_VENV), never a dependency of the product.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function pythonPeer(packages = ['datasketch==2.0.0', 'numpy', 'scipy']) {
  const venv = process.env.NEAR_DUP_BENCH_VENV ?? path.join(os.tmpdir(), 'near-dup-bench-venv');
  const python = path.join(venv, 'bin', 'python');
  if (!existsSync(python)) {
    process.stderr.write(`creating the peer's Python environment in ${venv} ...\n`);
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
  }
  execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...packages], { stdio: 'inherit' });
  return python;
}
