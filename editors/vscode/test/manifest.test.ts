// The manifest (package.json) against the extension's code: every contributed command is
// registered by activate(), every registered command is contributed (so it shows in the command
// palette), every keybinding runs a contributed command, and every `mercury.*` context key a
// `when` clause reads is one the extension sets.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const source = readFileSync(join(root, 'src', 'extension.ts'), 'utf8');

const contributed: string[] = pkg.contributes.commands.map((c: { command: string }) => c.command);
const registered = [...source.matchAll(/registerCommand\('([^']+)'/g)].map((m) => m[1]);
const contextKeys = new Set(
  [...source.matchAll(/const (\w+) = '(mercury\.[\w.]+)'/g)]
    .filter((m) => new RegExp(`'setContext', ${m[1]}\\b`).test(source))
    .map((m) => m[2]));

test('manifest: contributed and registered commands are the same set', () => {
  assert.ok(registered.length >= 7, `found ${registered.length} registerCommand calls`);
  assert.deepEqual([...registered].sort(), [...contributed].sort());
  assert.equal(new Set(registered).size, registered.length, 'a command is registered twice');
});

test('manifest: keybindings run contributed commands, and read context keys the extension sets', () => {
  assert.ok(contextKeys.has('mercury.nextEditVisible'));
  for (const kb of pkg.contributes.keybindings) {
    assert.ok(contributed.includes(kb.command), `${kb.key} -> ${kb.command} is not contributed`);
    for (const key of (kb.when ?? '').match(/mercury\.[\w.]+/g) ?? []) {
      assert.ok(contextKeys.has(key), `${kb.key}: "when" reads ${key}, which the extension never sets`);
    }
  }
});

test('manifest: the status item and the activation events point at real things', () => {
  for (const m of source.matchAll(/status\.command = [^;]*/g)) {
    for (const cmd of m[0].match(/'mercury\.\w+'/g) ?? []) assert.ok(contributed.includes(cmd.slice(1, -1)), cmd);
  }
  assert.equal(pkg.main, './dist/extension.js');
  const languages = pkg.contributes.configuration.properties['mercury.languages'].default as string[];
  const activation = new Set((pkg.activationEvents as string[]).map((e) => e.replace('onLanguage:', '')));
  for (const language of languages) assert.ok(activation.has(language), `no activation event for ${language}`);
});
