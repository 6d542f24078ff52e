// A reader that stops reading (`near-dup dedup --format text | head`) closes the pipe: the next write to
// stdout or stderr fails with EPIPE. Node ignores SIGPIPE, so without this the failure surfaces as an
// unhandled 'error' event and a stack trace. A command-line tool piped to head ends quietly instead, killed
// by SIGPIPE (status 141 in a shell): near-dup does the same. Whatever was written before is done (every
// command prints its results after its work), so nothing is left half-written by stopping here.

/** Ends the process as a closed pipe ends any other tool: by SIGPIPE, or with its status when that cannot be raised. */
export function endByClosedPipe(): never {
  // Node sets SIGPIPE to "ignore" at start; a listener added and removed again gives it back its default action.
  try {
    const quiet = () => {};
    process.on('SIGPIPE', quiet);
    process.off('SIGPIPE', quiet);
    process.kill(process.pid, 'SIGPIPE');
  } catch {
    // Raising it failed (a platform without SIGPIPE): the status a shell would show.
  }
  process.exit(141);
}

/** Makes a closed stdout or stderr end the process quietly; any other error of those streams is passed on. */
export function endQuietlyOnClosedPipes(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') endByClosedPipe();
      throw err;
    });
  }
}
