/** `oncely lab notes`: the notes story's versioned notes (docs/origins.md), a lost reply and its retries, step by step. */
export {
  runNotesStory,
  NOTES_STORY,
  type NotesStory,
  type NotesStep,
  type NotesExchange,
  type NotesLookup,
} from './notes-story.js';
export { formatNotesStory } from './notes-story-report.js';
export { lostReplyFetch, type LostReply, type LostReplyFetch } from './lost-reply-fetch.js';
