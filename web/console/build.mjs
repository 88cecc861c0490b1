// Builds the console bundle into functions/marketplace/console/dist (committed, so that a
// fresh clone compiles the go:embed without node). `node build.mjs --out DIR` writes
// elsewhere (the freshness check builds into a temporary folder and compares).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const i = process.argv.indexOf('--out');
const out = i > 0 ? resolve(process.argv[i + 1]) : resolve(here, '../../functions/marketplace/console/dist');

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
await build({
  entryPoints: [join(here, 'src/main.jsx')],
  bundle: true,
  format: 'esm',
  target: ['es2022'],
  minify: true,
  legalComments: 'eof',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: join(out, 'assets/app.js'),
  logLevel: 'warning',
});
await build({
  entryPoints: [join(here, 'src/app.css')],
  bundle: true,
  minify: true,
  outfile: join(out, 'assets/app.css'),
  logLevel: 'warning',
});
copyFileSync(join(here, 'src/index.html'), join(out, 'index.html'));
copyFileSync(join(here, 'src/icon.svg'), join(out, 'assets/icon.svg'));
