// The browser the explorer tests drive: Debian's chromium (no browser download works here), found at
// CHROMIUM_PATH or /usr/bin/chromium, installed with apt-get on first use when running as root (as CI
// does), and driven by playwright-core.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

function found(): string | undefined {
  return [process.env.CHROMIUM_PATH, ...CANDIDATES].find((p): p is string => p !== undefined && p !== '' && existsSync(p));
}

/** The browser's path, installing Debian's package if it is missing and this process may; else undefined and why. */
export async function chromiumPath(): Promise<{ path?: string; missing?: string }> {
  const present = found();
  if (present) return { path: present };
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) return { missing: 'no chromium (install Debian\'s chromium package, or set CHROMIUM_PATH)' };
  try {
    await run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { timeout: 900_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  } catch (err) {
    return { missing: `apt-get install chromium failed: ${(err as Error).message.split('\n')[0]}` };
  }
  const installed = found();
  return installed ? { path: installed } : { missing: 'apt-get installed chromium, but no binary was found' };
}
