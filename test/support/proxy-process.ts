// `near-dup proxy` as its own process, for tests that measure its memory: started on a free loopback port,
// its URL read from the line it prints, its memory read from /proc.
import { readFileSync } from 'node:fs';
import { runCli } from './documents.js';

export interface ProxyProcess {
  url: string;
  run: ReturnType<typeof runCli>;
  /** A field of /proc/PID/status (VmRSS, VmHWM), in MB. */
  memory(field: 'VmRSS' | 'VmHWM'): number;
}

export async function startProxyProcess(args: string[], env?: NodeJS.ProcessEnv): Promise<ProxyProcess> {
  const run = runCli(['proxy', '--listen', '127.0.0.1:0', ...args], { env });
  const url = await new Promise<string>((resolve, reject) => {
    run.child.stderr.on('data', (b: Buffer) => {
      const found = /listening on (\S+),/.exec(b.toString());
      if (found) resolve(found[1]);
    });
    run.done.then((r) => reject(new Error(`the proxy stopped: ${r.stderr}`)));
  });
  const memory = (field: string) => Number(/(\d+) kB/.exec(readFileSync(`/proc/${run.child.pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(field)) ?? '')?.[1]) / 1024;
  return { url, run, memory };
}
