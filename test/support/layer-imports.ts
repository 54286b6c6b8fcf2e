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
 * The files behind package.json "exports" (what a user can import), as paths from the repository
 * root: `./dist/src/http/index.d.ts` is `src/http/index.ts`.
 */
export function publicEntryFiles(packageJson: {
  readonly exports: Record<string, string | { readonly types?: string }>;
}): string[] {
  return Object.values(packageJson.exports).flatMap((target) =>
    typeof target === 'object' && target.types !== undefined
      ? [target.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts')]
      : [],
  );
}

export interface AppRules {
  /** The library's public entry files, from the repository root (publicEntryFiles). */
  readonly entries: readonly string[];
  /**
   * Apps bundled for the browser, with the pure layers of src/ they may import directly: the
   * root entry reaches node:http through the client, so a page cannot bundle it.
   */
  readonly browserApps: Readonly<Record<string, readonly string[]>>;
}

/**
 * Checks one file of apps/ (its path from the repository root, with /): an import that lands in
 * src/ lands on a public entry file, as a user's would; none lands in test/ or bench/; a browser
 * app reaches only its pure layers and no node:* module.
 */
export function checkAppImports(file: string, source: string, rules: AppRules): LayerViolation[] {
  const app = file.split('/')[1] ?? '';
  const pureLayers = rules.browserApps[app];
  const violations: LayerViolation[] = [];
  for (const specifier of importsOf(source)) {
    if (specifier.startsWith('node:')) {
      if (pureLayers !== undefined)
        violations.push({ file, specifier, why: `apps/${app} runs in a browser: no node:*` });
      continue;
    }
    if (!specifier.startsWith('.')) continue;
    const target = posix.normalize(posix.join(posix.dirname(file), specifier));
    const inRepo = target.replace(/\.js$/, '.ts');
    if (!inRepo.startsWith('apps/') && !inRepo.startsWith('src/')) {
      violations.push({ file, specifier, why: 'an app imports only apps/ and the library' });
      continue;
    }
    if (!inRepo.startsWith('src/')) continue;
    if (pureLayers !== undefined) {
      if (!pureLayers.includes(inRepo.split('/')[1] ?? ''))
        violations.push({
          file,
          specifier,
          why: `apps/${app} imports only ${pureLayers.join(', ')}`,
        });
    } else if (!rules.entries.includes(inRepo)) {
      violations.push({ file, specifier, why: 'an app imports the library through its exports' });
    }
  }
  return violations;
}
