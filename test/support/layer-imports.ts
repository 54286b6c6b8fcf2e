import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';

/**
 * The layers of src/, lowest first, as docs/design.md lists them in its "Layers" tree: the doc
 * is the one place the order lives, and this reads it from there.
 */
export function layersFromDesign(designMarkdown: string): string[] {
  const section = designMarkdown.split(/^## Layers$/m)[1]?.split(/^## /m)[0] ?? '';
  const tree = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return [...tree.matchAll(/^ {2}([a-z-]+)\/ /gm)].map((m) => m[1]!);
}

/** One import that runs up a layer (or out of a pure layer to node:*). */
export interface LayerViolation {
  readonly file: string;
  readonly specifier: string;
  readonly why: string;
}

export interface LayerRules {
  /** Lowest first. */
  readonly layers: readonly string[];
  /** Layers that must not import node:* (they run in the browser page too). */
  readonly pure: readonly string[];
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

/** The import specifiers of a TypeScript source: static imports, re-exports and import('…'). */
export function importsOf(source: string): string[] {
  return [...source.matchAll(IMPORT)].map((m) => (m[1] ?? m[2])!);
}

/**
 * Checks one file of src/ (its path relative to src, with /): every relative import must land in
 * the same layer or one listed below it, and a pure layer imports no node:* module.
 */
export function checkFileImports(
  fileInSrc: string,
  source: string,
  rules: LayerRules,
): LayerViolation[] {
  const layerOf = (path: string): string | undefined =>
    path.includes('/') ? path.split('/')[0] : undefined;
  const from = layerOf(fileInSrc);
  if (from === undefined) return []; // src/index.ts: the root export sits above every layer
  const rank = (layer: string): number => rules.layers.indexOf(layer);
  if (rank(from) < 0)
    return [
      { file: fileInSrc, specifier: '', why: `${from}/ is not a layer listed in docs/design.md` },
    ];
  const violations: LayerViolation[] = [];
  for (const specifier of importsOf(source)) {
    if (specifier.startsWith('node:')) {
      if (rules.pure.includes(from))
        violations.push({ file: fileInSrc, specifier, why: `${from} is pure: no node:* imports` });
      continue;
    }
    if (!specifier.startsWith('.')) continue;
    const target = posix.normalize(posix.join(posix.dirname(fileInSrc), specifier));
    if (target.startsWith('../')) {
      violations.push({ file: fileInSrc, specifier, why: 'imports from outside src/' });
      continue;
    }
    const to = layerOf(target);
    if (to === undefined || to === from) continue;
    if (rank(to) < 0)
      violations.push({
        file: fileInSrc,
        specifier,
        why: `${to}/ is not a layer listed in docs/design.md`,
      });
    else if (rank(to) > rank(from))
      violations.push({
        file: fileInSrc,
        specifier,
        why: `${from} imports ${to}, a layer above it`,
      });
  }
  return violations;
}

/** Every .ts file under `dir`, as paths relative to it with / separators. */
export function sourceFiles(dir: string): string[] {
  const walk = (at: string): string[] =>
    readdirSync(at).flatMap((name) => {
      const path = join(at, name);
      if (statSync(path).isDirectory()) return walk(path);
      return name.endsWith('.ts') ? [relative(dir, path).split(sep).join('/')] : [];
    });
  return walk(dir);
}

export function checkTree(srcDir: string, rules: LayerRules): LayerViolation[] {
  return sourceFiles(srcDir).flatMap((file) =>
    checkFileImports(file, readFileSync(join(srcDir, file), 'utf8'), rules),
  );
}

/**
 * The specifiers a user can import of a package: its name for ".", `name/sub` for "./sub"
 * (package.json "exports"; the package.json entry and wildcard subpaths left out).
 */
export function publicSpecifiers(packageJson: {
  readonly name: string;
  readonly exports: Record<string, unknown>;
}): string[] {
  return Object.keys(packageJson.exports)
    .filter((path) => path !== './package.json' && !path.includes('*'))
    .map((path) => (path === '.' ? packageJson.name : `${packageJson.name}/${path.slice(2)}`));
}

export interface ConsumerRules {
  /** The library's name: an import of it, or of `name/…`, must be one of `publicSpecifiers`. */
  readonly library: string;
  /** What the library's package.json "exports" offers (publicSpecifiers). */
  readonly publicSpecifiers: readonly string[];
  /** Of those, the ones a browser bundle may import: the root entry reaches node:http. */
  readonly browserSpecifiers: readonly string[];
}

/** Where a consumer's file lives, and so what it may import. */
export interface ConsumerTree {
  /** A relative import must land inside this folder (from the repository root, with /). */
  readonly home: string;
  /** Bundled for the browser: no node:*, and only the library's browser-safe entries. */
  readonly browser: boolean;
}

/**
 * Checks one file that uses the library as a user does (the CLI package, its page, the
 * benches, the examples; `file` from the repository root, with /): the library only through a
 * specifier its "exports" offers, never the repository's private `#oncely/…` imports nor a
 * relative path out of the file's own tree; in a browser tree, no node:* either.
 */
export function checkConsumerImports(
  file: string,
  source: string,
  tree: ConsumerTree,
  rules: ConsumerRules,
): LayerViolation[] {
  const violations: LayerViolation[] = [];
  for (const specifier of importsOf(source)) {
    if (specifier.startsWith('node:')) {
      if (tree.browser) violations.push({ file, specifier, why: 'runs in a browser: no node:*' });
    } else if (specifier.startsWith('#oncely/')) {
      violations.push({ file, specifier, why: "imports the library's internals" });
    } else if (specifier === rules.library || specifier.startsWith(`${rules.library}/`)) {
      if (!rules.publicSpecifiers.includes(specifier))
        violations.push({ file, specifier, why: 'not an export of the library' });
      else if (tree.browser && !rules.browserSpecifiers.includes(specifier))
        violations.push({ file, specifier, why: 'not a browser-safe entry of the library' });
    } else if (specifier.startsWith('.')) {
      const target = posix.normalize(posix.join(posix.dirname(file), specifier));
      if (!target.startsWith(`${tree.home}/`))
        violations.push({ file, specifier, why: `imports only inside ${tree.home}` });
    }
  }
  return violations;
}
