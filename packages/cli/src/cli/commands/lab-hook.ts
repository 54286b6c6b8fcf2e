import { Option, type Command } from 'commander';
import { InvalidOptionError } from 'oncely';
import { formatHookLab } from '../../lab/hook-lab-report.js';
import { HOOK_LAB_SCENARIOS, runHookLab, type HookLabScenarioName } from '../../lab/hook-lab.js';
import { processIo, type CliIo } from '../cli-io.js';

interface LabHookFlags {
  only?: HookLabScenarioName[];
  seed: string;
  json?: boolean;
}

/** `oncely lab hook`: the webhook storm's three scenarios (docs/origins.md), naive client beside oncely's. */
export function registerLabHook(program: Command, io: CliIo = processIo): void {
  program
    .command('hook')
    .description(
      "the hostile hook receiver (docs/origins.md) against a naive client and oncely's, side by side",
    )
    .addOption(
      new Option('--only <scenario...>', 'run only these scenarios').choices(
        HOOK_LAB_SCENARIOS.map((s) => s.name),
      ),
    )
    .option('--seed <n>', "seed for oncely's jitter", '3')
    .option('--json', 'print the hit lists and counts as JSON')
    .addHelpText(
      'after',
      `
Scenarios:
${HOOK_LAB_SCENARIOS.map((s) => `  ${s.name.padEnd(9)} ${s.script.padEnd(16)} ${s.explains}`).join('\n')}

Both clients talk to a real receiver on loopback; both sides run on a virtual clock, so the
1 s throttle costs no real second and the output is the same on every run.`,
    )
    .action(async (flags: LabHookFlags) => {
      const seed = Number(flags.seed);
      if (!Number.isSafeInteger(seed))
        throw new InvalidOptionError('--seed', flags.seed, 'an integer');
      const results = await runHookLab({ seed, ...(flags.only ? { only: flags.only } : {}) });
      io.out(flags.json ? `${JSON.stringify(results, null, 2)}\n` : formatHookLab(results));
    });
}
