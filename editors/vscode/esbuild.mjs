// Bundles the extension (dist/extension.js, `vscode` external) or, with --tests, the node tests
// (out/test/*.test.js) which load a stub of the `vscode` module.
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';

const tests = process.argv.includes('--tests');
const common = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'warning' };

if (tests) {
  const entryPoints = readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
  await build({ ...common, entryPoints, outdir: 'out/test', sourcemap: 'inline', alias: { vscode: './test/vscode-stub.ts' } });
} else {
  await build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'], minify: true });
}
