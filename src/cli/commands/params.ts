// near-dup params: the LSH bands and rows for a threshold, with their error probabilities.
import type { CommandModule } from 'yargs';
import { UsageError } from '../../errors.js';
import {
  DEFAULT_FALSE_NEGATIVE_WEIGHT,
  DEFAULT_THRESHOLD,
  falseNegativeProbability,
  falsePositiveProbability,
  optimalBandsRows,
} from '../../sketch/lsh.js';

interface ParamsArgs {
  threshold: number;
  numPerm: number;
  falseNegativeWeight: number;
}

/** `near-dup params`: the bands and rows a threshold gives, without a cluster. */
export const paramsCommand: CommandModule<object, ParamsArgs> = {
  command: 'params',
  describe: 'Print the LSH bands b and rows r chosen for a threshold (as datasketch MinHashLSH)',
  builder: (yargs) =>
    yargs
      .option('threshold', { type: 'number', default: DEFAULT_THRESHOLD, describe: 'Jaccard threshold' })
      .option('num-perm', { type: 'number', default: 128, describe: 'MinHash permutations' })
      .option('false-negative-weight', {
        type: 'number',
        default: DEFAULT_FALSE_NEGATIVE_WEIGHT,
        describe: 'weight of false negatives; false positives weigh 1 minus this',
      }) as never,
  handler: (argv) => {
    let lsh: ReturnType<typeof optimalBandsRows>;
    try {
      lsh = optimalBandsRows({ threshold: argv.threshold, numPerm: argv.numPerm, falseNegativeWeight: argv.falseNegativeWeight });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    process.stdout.write(
      JSON.stringify({
        b: lsh.b,
        r: lsh.r,
        false_positive: falsePositiveProbability(argv.threshold, lsh.b, lsh.r),
        false_negative: falseNegativeProbability(argv.threshold, lsh.b, lsh.r),
      }) + '\n',
    );
  },
};
