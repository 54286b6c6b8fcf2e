import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed so --help shows the whole tool.
export function registerLabNotes(program: Command): void {
  program.command('notes').description('(not built yet)').action(() => {
    throw new Error('notes: not built yet');
  });
}
