import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed so --help shows the whole tool.
export function registerDeliver(program: Command): void {
  program.command('deliver').description('(not built yet)').action(() => {
    throw new Error('deliver: not built yet');
  });
}
