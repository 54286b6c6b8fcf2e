import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed so --help shows the whole tool.
export function registerServe(program: Command): void {
  program.command('serve').description('(not built yet)').action(() => {
    throw new Error('serve: not built yet');
  });
}
