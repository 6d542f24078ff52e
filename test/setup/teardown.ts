// A global setup's teardown: its steps in reverse order, each one's failure said and the others still run.
export async function runTeardown(steps: Array<() => Promise<void>>, say: (line: string) => void): Promise<void> {
  for (const step of [...steps].reverse()) {
    try {
      await step();
    } catch (err) {
      say(`teardown: ${(err as Error).message}`);
    }
  }
}
