// The README's console examples as test/integration/readme-examples.test.ts reads them: which blocks run,
// their commands, and the output each command shows, with the README's conventions (its paragraph "The
// examples in this README run as written" says so for its readers, docs/tests.md in full):
//
// - A fenced block marked ```console is an example that runs. Shell examples go in no other kind of fence.
// - A line `<!-- readme-test: not run: REASON -->` right before the fence keeps the block from running
//   (a server of the reader's own, credentials, Docker, a command that runs until Ctrl-C); REASON is required.
// - A line `<!-- readme-test: numbers vary -->` right before the fence compares every number of its output
//   loosely (any number matches); elsewhere only durations (`0.4 s`, `31 ms`, `831 docs/s`) do.
// - `$ ` starts a command; `> ` continues it on the next line (a here-document, say). `# exits N` in a
//   command's comment says it is meant to exit with status N (0 otherwise). A command ending in `&` runs in
//   the background: the next command starts once its output matches the lines shown under it, and it is
//   stopped (SIGINT) when the block ends.
// - The lines after a command, up to the next `$ `, are its output (stdout and stderr as a terminal shows
//   them), compared line by line: `...` or `…` inside a line matches any text, a line of only `...` or `…`
//   any number of lines, runs of spaces any spacing; blank lines are ignored. A command shown without
//   output is run but its output is not compared.

export interface ReadmeCommand {
  /** The command as bash runs it (continuation lines joined with newlines), without its `$ ` and a trailing `&`. */
  text: string;
  /** The command's first line as written, for messages. */
  shown: string;
  /** Its line in README.md (1-based). */
  line: number;
  expectedStatus: number;
  background: boolean;
  /** The output lines shown under it (blank lines dropped). */
  output: string[];
}

export interface ReadmeBlock {
  /** Line of the opening fence in README.md (1-based). */
  line: number;
  /** Why it does not run, or undefined when it runs. */
  notRun?: string;
  numbersVary: boolean;
  commands: ReadmeCommand[];
}

const MARKER = /^<!--\s*readme-test:\s*(.*?)\s*-->\s*$/;

/** Every ```console block of a README, with its markers; throws on a marker it does not know. */
export function consoleBlocks(readme: string): ReadmeBlock[] {
  const lines = readme.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)\s*$/.exec(lines[i]);
    if (!fence || fence[1] === '') continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`README.md:${i + 1}: a fence that is never closed`);
    if (fence[1] === 'console') {
      const block: ReadmeBlock = { line: i + 1, numbersVary: false, commands: [] };
      for (let m = i - 1; m >= 0 && MARKER.test(lines[m]); m--) {
        const what = MARKER.exec(lines[m])![1];
        const notRun = /^not run:\s*(.*)$/.exec(what);
        if (notRun) {
          if (!notRun[1]) throw new Error(`README.md:${m + 1}: "not run" needs a reason`);
          block.notRun = notRun[1];
        } else if (what === 'numbers vary') block.numbersVary = true;
        else throw new Error(`README.md:${m + 1}: unknown readme-test marker "${what}"`);
      }
      block.commands = commandsOf(lines.slice(i + 1, end), i + 2);
      blocks.push(block);
    }
    i = end;
  }
  return blocks;
}

/** Fences whose language would make them shell examples that the test never runs. */
export function shellFencesOtherThanConsole(readme: string): number[] {
  return readme
    .split('\n')
    .map((l, i) => (/^```(sh|bash|shell|zsh|shell-session)\s*$/.test(l) ? i + 1 : 0))
    .filter(Boolean);
}

function commandsOf(body: string[], firstLine: number): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  for (let k = 0; k < body.length; k++) {
    const line = body[k];
    if (line.startsWith('$ ')) {
      const parts = [line.slice(2)];
      while (k + 1 < body.length && body[k + 1].startsWith('> ')) parts.push(body[++k].slice(2));
      const exit = /\s#.*?\bexits (\d+)\b/.exec(parts[0]);
      let text = parts.join('\n');
      // A one-line command ending in & (before any comment) runs in the background.
      const background = parts.length === 1 && /[^&]&$/.test(stripComment(parts[0]));
      if (background) text = stripComment(parts[0]).slice(0, -1).trimEnd();
      commands.push({ text, shown: line.slice(2), line: firstLine + k - parts.length + 1, expectedStatus: exit ? Number(exit[1]) : 0, background, output: [] });
    } else if (commands.length > 0 && line.trim() !== '') commands[commands.length - 1].output.push(line);
    else if (commands.length === 0 && line.trim() !== '') throw new Error(`README.md:${firstLine + k}: output before any command in a console block`);
  }
  return commands;
}

/** The command without a trailing shell comment (a `#` after white space, outside quotes). */
export function stripComment(command: string): string {
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(command[i - 1]))) return command.slice(0, i).trimEnd();
  }
  return command.trimEnd();
}

const NUMBER = /-?\d+(?:\.\d+)?/g;
/** A number before a unit of time or rate: timings differ from run to run. */
const DURATION = /\d+(?:\.\d+)?(?= ?(?:s|ms|docs\/s)\b)/g;
const ELLIPSIS = /\.\.\.|…/;

/** One shown output line as a regular expression over one actual line. */
function linePattern(shown: string, numbersVary: boolean): RegExp {
  const loose = numbersVary ? NUMBER : DURATION;
  const pieces: string[] = [];
  for (const [j, part] of shown.trim().split(ELLIPSIS).entries()) {
    if (j > 0) pieces.push('.*');
    let last = 0;
    let out = '';
    for (const m of part.matchAll(loose)) {
      out += literal(part.slice(last, m.index)) + '-?\\d+(?:\\.\\d+)?';
      last = m.index! + m[0].length;
    }
    pieces.push(out + literal(part.slice(last)));
  }
  return new RegExp(`^${pieces.join('')}$`);
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&').replace(/\s+/g, '\\s+');

const isGap = (line: string) => /^\s*(\.\.\.|…)\s*$/.test(line);

/**
 * Whether the actual output matches the lines shown, and if not, the first shown line that no actual line
 * answers (for the message).
 */
export function matchOutput(shown: string[], actual: string, numbersVary: boolean): { ok: true } | { ok: false; expected: string } {
  const want = shown.filter((l) => l.trim() !== '');
  const got = actual.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  const patterns = want.map((l) => (isGap(l) ? null : linePattern(l, numbersVary)));
  // Lines against lines, a gap matching any run of lines: memoized over (shown, actual) positions.
  const memo = new Map<string, boolean>();
  let furthest = 0;
  const fits = (w: number, g: number): boolean => {
    const key = `${w},${g}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    furthest = Math.max(furthest, w);
    let result: boolean;
    if (w === patterns.length) result = g === got.length;
    else if (patterns[w] === null) result = fits(w + 1, g) || (g < got.length && fits(w, g + 1));
    else result = g < got.length && patterns[w]!.test(got[g].trim()) && fits(w + 1, g + 1);
    memo.set(key, result);
    return result;
  };
  if (fits(0, 0)) return { ok: true };
  const stuck = want.slice(furthest).find((l) => !isGap(l));
  return { ok: false, expected: stuck ?? '(no more lines)' };
}

/** Whether the output so far already holds every shown line (for a background command's start). */
export function outputReached(shown: string[], actual: string, numbersVary: boolean): boolean {
  return matchOutput([...shown, '...'], actual, numbersVary).ok;
}
