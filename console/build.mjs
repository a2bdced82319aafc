// Bundles src/ into dist/: assets/app-<hash>.js and .css (content-hashed: the api serves assets as
// immutable) and index.html from src/index.html, referring to them by relative urls, since the
// console may live below a stage (/Prod/console/). Skips the work when dist is newer than every
// input, so the api's build.rs pays a few milliseconds when nothing changed.
import * as esbuild from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const inputs = ['src', 'build.mjs', 'package-lock.json'];
const stamp = 'dist/index.html';

function newest(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(s.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

function upToDate() {
  try {
    const built = statSync(stamp).mtimeMs;
    return inputs.every((input) => newest(input) < built);
  } catch {
    return false;
  }
}

if (upToDate() && !process.argv.includes('--force')) {
  process.exit(0);
}

// Built aside, then swapped in, so dist is never half written.
const next = 'dist.next';
rmSync(next, { recursive: true, force: true });
const result = await esbuild.build({
  entryPoints: { app: 'src/main.jsx' },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  outdir: join(next, 'assets'),
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const js = outputs.find((name) => name.endsWith('.js'));
const css = outputs.find((name) => name.endsWith('.css'));
if (!js || !css) throw new Error(`esbuild wrote ${outputs.join(', ')}: expected one .js and one .css`);
const page = readFileSync('src/index.html', 'utf8')
  .replace('{{script}}', `assets/${js}`)
  .replace('{{style}}', `assets/${css}`);
if (page.includes('{{')) throw new Error('src/index.html has a placeholder build.mjs does not fill');
mkdirSync(next, { recursive: true });
writeFileSync(join(next, 'index.html'), page);
rmSync('dist', { recursive: true, force: true });
renameSync(next, 'dist');
