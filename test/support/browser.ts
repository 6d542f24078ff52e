// The browser the explorer tests drive: Debian's chromium (no browser download works here), found at
// CHROMIUM_PATH or /usr/bin/chromium, installed with apt-get on first use when running as root (as CI
// does), and driven by playwright-core.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Page } from 'playwright-core';
import type { TestContext } from 'vitest';

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

/**
 * Runs `use` on a new page of the explorer at `url` in Chromium, a cluster opened (its members listed), the
 * page's script errors collected in `errors`; screenshots go to `output` named after the engine. Without a
 * browser the test is skipped, or fails under CI=true (a missing part is a failure there, not a skip).
 */
export async function inExplorerPage(
  test: TestContext,
  url: string,
  shots: { output: string; prefix: string },
  use: (page: Page, tools: { errors: string[]; shot: (name: string) => string }) => Promise<void>,
): Promise<void> {
  const browserPath = await chromiumPath();
  if (!browserPath.path) {
    if (process.env.CI === 'true') throw new Error(`no browser for the explorer test under CI=true: ${browserPath.missing}`);
    console.warn(`EXPLORER BROWSER TEST SKIPPED: ${browserPath.missing}`);
    test.skip();
    return;
  }
  mkdirSync(shots.output, { recursive: true });
  const shot = (name: string) => path.join(shots.output, `${shots.prefix}-${name}.png`);
  const browser = await chromium.launch({ executablePath: browserPath.path, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.locator('li.cluster').first().click();
    await page.locator('tr.member').nth(1).waitFor();
    await use(page, { errors, shot });
  } finally {
    await browser.close();
  }
}
