import type { Command } from 'commander';
import { formatNotesStory, runNotesStory } from '../../lab/notes/index.js';
import { processIo, type CliIo } from '../cli-io.js';

interface LabNotesFlags {
  json?: boolean;
}

/** `oncely lab notes`: the notes story (docs/origins.md), printed step by step like its `demo.py retries`. */
export function registerLabNotes(program: Command, io: CliIo = processIo): void {
  program
    .command('notes')
    .description(
      "the versioned notes (docs/origins.md): a lost reply, the exact retry, a reused request ID, a stale version, and a receipt that is not today's state",
    )
    .option('--json', 'print every step (request, answer, meaning) as JSON')
    .addHelpText(
      'after',
      `
The notes app runs in process on the idempotency ledger over an in-memory SQLite database,
starting from disposable synthetic notes. Oncely's client sends every request; the reply to the
first edit is lost on purpose after the server committed. Nothing listens on a port and the
clock is virtual, so every run prints the same story.

Steps: Alice reads note-1; edits it and loses the reply; asks the status lookup; retries
exactly (the first receipt); reuses the request ID for another title (422); resends the old
command under a new ID (409 version conflict); Bob edits (version 3); Alice's replay still says
version 2 while the note says 3.`,
    )
    .action(async (flags: LabNotesFlags) => {
      const story = await runNotesStory();
      io.out(flags.json ? `${JSON.stringify(story, null, 2)}\n` : formatNotesStory(story));
    });
}
