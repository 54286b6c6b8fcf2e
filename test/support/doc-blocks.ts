// Finds the fenced code blocks of the README and docs/ and the marker each one carries. Every
// block says, in an HTML comment on the line right above its fence, how the suite checks it:
//   <!-- example: examples/client.ts -->   the block is that file, byte for byte; the suite runs the file
//   <!-- run: sh -->                        bash runs the block against a fresh `oncely serve`
//   <!-- run: sh, serve --hook-script 'swallow,200' -->   ... started with these options
//   <!-- run: sh, no server -->             bash runs the block, no server
//   <!-- not run: why -->                   shown only (sample output, a tree, the build itself)
// `node scripts/sync-examples.js` copies each example file into the blocks that include it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export type BlockMarker =
  | { readonly kind: 'example'; readonly file: string }
  | { readonly kind: 'run'; readonly server: boolean; readonly serveArgs: readonly string[] }
  | { readonly kind: 'not-run'; readonly reason: string }
  | { readonly kind: 'missing' }
  | { readonly kind: 'malformed'; readonly text: string };

export interface DocBlock {
  /** Repository-relative path of the markdown file. */
  readonly doc: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  /** The block's text, with its final newline. */
  readonly body: string;
  readonly marker: BlockMarker;
  /** Offsets of the body in the file, for rewriting it. */
  readonly bodyStart: number;
  readonly bodyEnd: number;
}

const MARKER = /^<!--\s*(example|run|not run):\s*(.*?)\s*-->\s*$/;

/** The markdown files whose blocks the suite executes: README.md, docs/**, examples/README.md. */
export function docFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  return ['README.md', ...walk('docs'), 'examples/README.md'].sort();
}

export function parseBlocks(root: string, doc: string): DocBlock[] {
  const text = readFileSync(join(root, doc), 'utf8');
  const lines = text.split('\n');
  const offsets: number[] = [];
  let offset = 0;
  for (const line of lines) {
    offsets.push(offset);
    offset += line.length + 1;
  }
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```+|~~~+)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[2]!;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence)) end++;
    const bodyStart = offsets[i + 1] ?? text.length;
    const bodyEnd = offsets[end] ?? text.length;
    blocks.push({
      doc: relative(root, join(root, doc)),
      line: i + 1,
      lang: open[3]!.trim(),
      body: text.slice(bodyStart, bodyEnd),
      marker: parseMarker(i > 0 ? lines[i - 1]! : ''),
      bodyStart,
      bodyEnd,
    });
    i = end;
  }
  return blocks;
}

function parseMarker(line: string): BlockMarker {
  if (!line.trimStart().startsWith('<!--')) return { kind: 'missing' };
  const match = MARKER.exec(line.trim());
  if (!match) return { kind: 'malformed', text: line.trim() };
  const [, kind, rest] = match as unknown as [string, string, string];
  if (kind === 'example')
    return rest ? { kind: 'example', file: rest } : { kind: 'malformed', text: line.trim() };
  if (kind === 'not run')
    return rest ? { kind: 'not-run', reason: rest } : { kind: 'malformed', text: line.trim() };
  const run = /^sh(?:,\s*(no server|serve(?:\s+(.*))?))?$/.exec(rest);
  if (!run) return { kind: 'malformed', text: line.trim() };
  if (run[1] === 'no server') return { kind: 'run', server: false, serveArgs: [] };
  return { kind: 'run', server: true, serveArgs: splitArgs(run[2] ?? '') };
}

/** Splits `--a 'b c' d` the way a shell would for single quotes (all the markers need). */
function splitArgs(text: string): string[] {
  return [...text.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}
