// What scripts/engine says about a stop, as one truthful account: an engine that was not running is said
// so once, never followed by "<name> stopped" (issue 50). Pure, for the unit test.

/** The lines of `stop` for one engine: `stdout` one line, `stderr` the details (or nothing). */
export function stopLines(flavour, result) {
  if (!result.stopped) return { stdout: `${flavour} was not running (nothing started by scripts/engine)\n`, stderr: '' };
  return { stdout: `${flavour} stopped\n`, stderr: `engine: ${flavour} stopped (pid ${result.pid}), its data folder removed\n` };
}

/** The engines whose artifacts a start must resolve: those that do not answer already (a running one is reused, no Maven). */
export function toResolve(flavours, answering) {
  return flavours.filter((_, i) => !answering[i]);
}
