import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed so --help shows the whole tool.
export function registerSim(program: Command): void {
  program.command('sim').description('(not built yet)').action(() => {
    throw new Error('sim: not built yet');
  });
}
