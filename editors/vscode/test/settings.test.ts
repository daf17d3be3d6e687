// Settings sync against the real server: only the server's typed settings are sent (never
// serverPath, enable, languages or trace), nothing is reported at start-up with defaults, and a
// bad value the user set reaches the server (which names it).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { acceptConfidentText, confidentText } from '../src/confidence';
import { configurationItems, serverSettings } from '../src/settings';
import { CAPABILITIES, startServer } from './server';
import { setUserSettings } from './vscode-stub';

test('defaults: nothing but what the user set is sent', () => {
  setUserSettings({});
  assert.deepEqual(serverSettings(), {});
});

test('client-side keys never reach the server; nested leaves are grouped', () => {
  setUserSettings({
    'mercury.serverPath': '/opt/venv/bin/mercury-lsp', 'mercury.enable': true, 'mercury.trace.server': 'verbose',
    'mercury.languages': ['python'], 'mercury.preset': 'fast', 'mercury.nextEdit.maxDocuments': 3,
  }, { 'mercury.maxTokens': 32 });
  assert.deepEqual(serverSettings(), { preset: 'fast', maxTokens: 32, nextEdit: { maxDocuments: 3 } });
  assert.deepEqual(configurationItems([{ section: 'mercury' }, { section: 'python' }]),
    [{ preset: 'fast', maxTokens: 32, nextEdit: { maxDocuments: 3 } }, null]);
});

test('the real server takes the synced settings without a message; a bad value is named', async () => {
  setUserSettings({ 'mercury.serverPath': '/somewhere/mercury-lsp', 'mercury.trace.server': 'messages',
    'mercury.preset': 'fast' });
  const server = await startServer({ capabilities: CAPABILITIES, initializationOptions: serverSettings() },
    configurationItems);
  try {
    await server.ready;
    // What extension.ts sends when a server setting changes, then a pull (settings: null).
    await server.conn.sendNotification('workspace/didChangeConfiguration', { settings: { mercury: serverSettings() } });
    await server.conn.sendRequest('mercury/stats', {}); // in-order server: earlier messages are out
    assert.equal(server.messages.length, 0, JSON.stringify(server.messages));
    setUserSettings({ 'mercury.serverPath': '/somewhere/mercury-lsp', 'mercury.maxTokens': 0 });
    const message = server.nextMessage(30000);
    // A pull: the server asks workspace/configuration, answered by the extension's middleware.
    await server.conn.sendNotification('workspace/didChangeConfiguration', { settings: null });
    const m = await message;
    assert.match(m.message, /maxTokens/);
    assert.doesNotMatch(m.message, /serverPath|trace/);
  } finally {
    await server.close();
  }
});

test('confidentText reads the confident part of an item', () => {
  assert.equal(confidentText({ command: { command: 'mercury.accepted', arguments: [{ confidentText: 'x = f(a, ' }] } }),
    'x = f(a, ');
  assert.equal(confidentText({ command: { command: 'mercury.accepted', arguments: [{}] } }), undefined);
  assert.equal(confidentText({ command: { command: 'other', arguments: [{ confidentText: 'x' }] } }), undefined);
  assert.equal(confidentText({}), undefined);
});

test('accepting the confident part: the range becomes it, the cursor stays before the rest of the line', () => {
  const text = 'x = 1\ntotal = compute()\ny = 2\n';
  const start = text.indexOf('total');
  const end = text.indexOf('\ny = 2');
  const cursor = text.indexOf(')'); // typed `compute(`, the `)` was auto-closed
  const after = acceptConfidentText(text, start, end, cursor, 'total = compute(values, )');
  assert.equal(after.text, 'x = 1\ntotal = compute(values, )\ny = 2\n');
  assert.equal(after.text.slice(after.cursor), ')\ny = 2\n');
  // The cursor at the end of the line: after the whole confident part.
  const atEnd = acceptConfidentText(text, start, end, end, 'total = compute(v');
  assert.equal(atEnd.text.slice(atEnd.cursor), '\ny = 2\n');
});

test('start-up with default settings: no message from the server', async () => {
  setUserSettings({});
  const server = await startServer({ capabilities: CAPABILITIES, initializationOptions: serverSettings() },
    configurationItems);
  try {
    await server.ready;
    await server.conn.sendRequest('mercury/stats', {}); // in-order server: earlier messages are out
    assert.deepEqual(server.messages, []);
  } finally {
    await server.close();
  }
});
