import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed so --help shows the whole tool.
export function registerHook(program: Command): void {
  program.command('hook').description('(not built yet)').action(() => {
    throw new Error('hook: not built yet');
  });
}
