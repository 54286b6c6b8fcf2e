import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed so --help shows the whole tool.
export function registerLabDropbox(program: Command): void {
  program.command('dropbox').description('(not built yet)').action(() => {
    throw new Error('dropbox: not built yet');
  });
}
