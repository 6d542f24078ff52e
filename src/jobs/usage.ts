// What a job cost this process: peak memory and CPU time, for the summaries.

/** Peak resident memory of this process (every thread), MB. */
export function peakMemoryMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** CPU seconds (user and system, every thread) this process spent since `start`. */
export function cpuSecondsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}
