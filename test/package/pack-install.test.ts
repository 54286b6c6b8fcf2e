// The install a user does: pack the two packages (`oncely`, the library; `@oncely/cli`, the
// command), install them into empty apps, and use them there: the library alone with import and
// with require, the CLI, and the documented client and ledger examples. The tarballs are packed
// from a copy of the tree holding this tree's own build, fresh (a file of a removed source is
// left out, as prepack's build would): `npm test` has just built it, and compiling everything
// again for the tarballs took most of this test's time. Offline: each app's node_modules is
// seeded with the runtime dependencies this repository already installed, and npm adds the
// tarballs alone. The steps that do not need each other's results run side by side.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { EXAMPLE_DRIVERS } from '../support/example-drivers.js';
import { CLI_SRC, LIBRARY_SRC, REPO_ROOT, repoPath } from '../support/repo-path.js';

const work = mkdtempSync(join(tmpdir(), 'oncely-pack-'));
/** An app that installed the library alone, and one that installed the CLI (and so the library). */
const libraryApp = join(work, 'library-app');
const cliApp = join(work, 'cli-app');
const npmCache = join(work, 'npm-cache');
const manifest = (dir: string) =>
  JSON.parse(readFileSync(repoPath(dir, '..', 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
const libraryPkg = manifest(LIBRARY_SRC);
const cliPkg = manifest(CLI_SRC);
/** The files of each tarball, by package name. */
const packed: Record<string, string[]> = {};

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `cmd args` in `cwd` to its end (killed after 180 s), without blocking this process. */
const run = (cmd: string, args: string[], cwd: string): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      timeout: 180_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A cache of its own, empty, beside the apps: the install needs nothing from a cache (the
      // dependencies are seeded, the tarballs are files), and in the user's ~/.npm it read the
      // optional peers' full registry documents (megabytes) and wrote the tarballs' entries.
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_cache: npmCache },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });

/** The runtime dependencies of a package, less the library itself (installed from its tarball). */
const runtimeOf = (pkg: { dependencies: Record<string, string> }) =>
  Object.keys(pkg.dependencies).filter((name) => name !== 'oncely');

before(async () => {
  // A copy of the tree: the tracked and new files and the build.
  const clone = join(work, 'clone');
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  for (const file of [...files, ...freshBuild()]) {
    if (!existsSync(join(REPO_ROOT, file))) continue; // deleted, not yet committed
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(clone, file));
  }
  // The build is there: prepack (which builds it) need not run.
  const packing = run(
    'npm',
    [
      'pack',
      '--json',
      '--ignore-scripts',
      '--pack-destination',
      work,
      '-w',
      'packages/oncely',
      '-w',
      'packages/cli',
    ],
    clone,
  );

  // Meanwhile, the apps with the runtime dependencies (and theirs) already in node_modules.
  for (const [app, pkg] of [
    [libraryApp, libraryPkg],
    [cliApp, cliPkg],
  ] as const) {
    mkdirSync(join(app, 'node_modules'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    seedInstalled(app, runtimeClosure([...runtimeOf(libraryPkg), ...runtimeOf(pkg)]));
  }

  const pack = await packing;
  assert.equal(pack.status, 0, pack.stderr);
  const infos = JSON.parse(pack.stdout) as {
    name: string;
    filename: string;
    files: { path: string }[];
  }[];
  const tarball: Record<string, string> = {};
  for (const info of infos) {
    packed[info.name] = info.files.map((f) => f.path);
    tarball[info.name] = join(work, info.filename);
  }
  const install = (app: string, tarballs: string[]) =>
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], app);
  const [library, cli] = await Promise.all([
    install(libraryApp, [tarball['oncely']!]),
    install(cliApp, [tarball['oncely']!, tarball['@oncely/cli']!]),
  ]);
  assert.equal(library.status, 0, library.stderr);
  assert.equal(cli.status, 0, cli.stderr);
});

after(() => rmSync(work, { recursive: true, force: true }));

/** Each source module of `srcDir` that the tarball lacks, built or with its types. */
function unbuilt(srcDir: string, files: string[], withTypes: boolean): string[] {
  return listFiles(repoPath(srcDir))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => relative(repoPath(srcDir), f).replace(/\.ts$/, ''))
    .filter(
      (f) => !files.includes(`dist/${f}.js`) || (withTypes && !files.includes(`dist/${f}.d.ts`)),
    );
}

test('the library tarball holds the built library, its license, and no apps, page or sources', () => {
  const files = packed['oncely'] ?? [];
  for (const file of [
    'package.json',
    'README.md',
    'LICENSE',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/http/index.js',
  ])
    assert.ok(files.includes(file), `${file} is packed`);
  assert.deepEqual(
    unbuilt(LIBRARY_SRC, files, true),
    [],
    'every source module, built, with its types',
  );
  assert.deepEqual(
    files.filter(
      (f) =>
        (f.endsWith('.ts') && !f.endsWith('.d.ts')) ||
        /(^|\/)(cli|serve|lab|sim|web)\//.test(f) ||
        f.includes('tsbuildinfo'),
    ),
    [],
    'no TypeScript sources, apps, page or build records',
  );
});

test('the CLI tarball holds the built command and its page', () => {
  const files = packed['@oncely/cli'] ?? [];
  for (const file of [
    'package.json',
    'README.md',
    'LICENSE',
    'dist/cli/main.js',
    'web/dist/index.html',
  ])
    assert.ok(files.includes(file), `${file} is packed`);
  assert.deepEqual(unbuilt(CLI_SRC, files, false), [], 'every source module, built');
  assert.deepEqual(
    files.filter((f) => f.endsWith('.ts') || /^dist\/(test|bench|examples)\//.test(f)),
    [],
    'no sources, tests, benches or examples',
  );
});

test('every shipped source map carries its sources', () => {
  const root = join(libraryApp, 'node_modules', 'oncely', 'dist');
  const maps = listFiles(root).filter((f) => f.endsWith('.js.map'));
  assert.ok(maps.length > 50);
  for (const map of maps) {
    const { sources, sourcesContent } = JSON.parse(readFileSync(map, 'utf8')) as {
      sources: string[];
      sourcesContent?: (string | null)[];
    };
    assert.equal(
      sourcesContent?.filter((s) => typeof s === 'string').length,
      sources.length,
      `${map} embeds its sources`,
    );
  }
});

test('installing the library adds only its own dependencies: no CLI, server or progress bar', () => {
  const installed = readdirSync(join(libraryApp, 'node_modules')).flatMap((name) =>
    name.startsWith('@')
      ? readdirSync(join(libraryApp, 'node_modules', name)).map((scoped) => `${name}/${scoped}`)
      : name.startsWith('.')
        ? []
        : [name],
  );
  assert.deepEqual(installed.sort(), ['oncely', ...runtimeClosure(runtimeOf(libraryPkg))].sort());
  for (const name of ['commander', 'cli-progress', 'prom-client', 'hono'])
    assert.equal(installed.includes(name), false, `${name} is not installed`);
});

test('the app loads oncely with import and with require, drivers not installed', async () => {
  const [imported, required] = await Promise.all([
    run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { createClient } from 'oncely'; import { createIdempotencyMiddleware } from 'oncely/http'; import { createMemoryStore } from 'oncely/stores/memory'; console.log(typeof createClient, typeof createIdempotencyMiddleware, typeof createMemoryStore)",
      ],
      libraryApp,
    ),
    // require(esm): Node >= 20.19 and >= 22.12, through the exports' "default" condition.
    run(
      process.execPath,
      [
        '-e',
        "const { createClient } = require('oncely'); const { createMemoryStore } = require('oncely/stores/memory'); console.log(typeof createClient, typeof createMemoryStore)",
      ],
      libraryApp,
    ),
  ]);
  assert.equal(imported.stdout.trim(), 'function function function', imported.stderr);
  assert.equal(required.stdout.trim(), 'function function', required.stderr);
  assert.equal(required.stderr, '', 'no warning');
});

test('the CLI runs from the app; a store without its driver is one clear line', async () => {
  const bin = join(cliApp, 'node_modules', '.bin', 'oncely');
  const [lab, serve] = await Promise.all([
    run(bin, ['lab', 'dropbox'], cliApp),
    run(bin, ['serve', '--port', '0', '--db', 'postgres://postgres@127.0.0.1:9/none'], cliApp),
  ]);
  assert.equal(lab.status, 0, lab.stderr);
  assert.equal(serve.status, 1);
  assert.match(
    serve.stderr,
    /needs the pg package \(an optional peer dependency of oncely\): npm install pg@8/,
  );
});

test('the documented client and ledger examples run in the app', async () => {
  // What `npm install better-sqlite3` would add (offline: the build this repository already has).
  for (const name of runtimeClosure(['better-sqlite3']).filter(
    (n) => n !== 'prebuild-install' && !existsSync(join(libraryApp, 'node_modules', n)),
  )) {
    cpSync(repoPath('node_modules', name), join(libraryApp, 'node_modules', name), {
      recursive: true,
    });
  }
  // Side by side: each has a server and a database of its own.
  await Promise.all(
    ['client', 'ledger'].map((name) => {
      const script = join(libraryApp, `${name}.mjs`);
      cpSync(repoPath('dist', 'examples', `${name}.js`), script);
      return EXAMPLE_DRIVERS[`examples/${name}.ts`]!(script, libraryApp);
    }),
  );
});

/**
 * The files of this tree's build that a fresh build makes: each package's dist output whose
 * TypeScript source is still there (tsc never deletes the output of a removed source), and the
 * CLI's page.
 */
function freshBuild(): string[] {
  const built = (dir: string) => listFiles(repoPath(dir)).map((f) => relative(REPO_ROOT, f));
  const hasSource = (pkg: string) => (file: string) =>
    existsSync(
      repoPath(
        file.replace(`${pkg}/dist/`, `${pkg}/src/`).replace(/(\.d\.ts|\.js|\.js\.map)$/, '.ts'),
      ),
    );
  return [
    ...built('packages/oncely/dist').filter(hasSource('packages/oncely')),
    ...built('packages/cli/dist').filter(hasSource('packages/cli')),
    ...built('packages/cli/web/dist'),
  ];
}

/**
 * Puts `names` in the app's node_modules as an install would have left them: each package, and a
 * link in node_modules/.bin for each command it declares. npm takes a package without its links
 * for a broken one and fetches it again, which an empty cache, offline, cannot give.
 */
function seedInstalled(app: string, names: string[]): void {
  const bin = join(app, 'node_modules', '.bin');
  for (const name of names) {
    const target = join(app, 'node_modules', name);
    cpSync(repoPath('node_modules', name), target, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as {
      bin?: string | Record<string, string>;
    };
    const commands =
      typeof manifest.bin === 'string'
        ? { [name.split('/').at(-1)!]: manifest.bin }
        : (manifest.bin ?? {});
    for (const [command, file] of Object.entries(commands)) {
      mkdirSync(bin, { recursive: true });
      symlinkSync(relative(bin, join(target, file)), join(bin, command));
    }
  }
}

/** The packages `names` need at run time, from this repository's lockfile (all hoisted here). */
function runtimeClosure(names: string[]): string[] {
  const lock = JSON.parse(readFileSync(repoPath('package-lock.json'), 'utf8')) as {
    packages: Record<string, { dependencies?: Record<string, string> }>;
  };
  const seen = new Set<string>();
  const queue = [...names];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name) || name === 'prebuild-install') continue; // an install-time downloader, not needed to run
    seen.add(name);
    queue.push(...Object.keys(lock.packages[`node_modules/${name}`]?.dependencies ?? {}));
  }
  return [...seen];
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)],
  );
}
