// What a job cost this process: peak memory, CPU time and the time spent waiting for the engine, for the
// summaries.
import type { EngineClient } from '../engine/client.js';

/** Peak resident memory of this process (every thread), MB. */
export function peakMemoryMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** CPU seconds (user and system, every thread) this process spent since `start`. */
function cpuSecondsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

/** From its creation: this process's CPU seconds, and the seconds the client's requests waited for answers. */
export class UsageMeter {
  readonly #cpu = process.cpuUsage();
  readonly #waited: number;

  constructor(private readonly client: EngineClient) {
    this.#waited = client.waits.seconds;
  }

  read(): { cpuSeconds: number; engineWaitSeconds: number } {
    return { cpuSeconds: cpuSecondsSince(this.#cpu), engineWaitSeconds: this.client.waits.seconds - this.#waited };
  }
}
