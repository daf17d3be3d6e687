// Inline completion against the real server, as vscode-languageclient 10 asks for it: the item
// replaces the cursor's line from column 0 (typed text keeps matching), accepting it gives the
// line with the suggestion inserted, and the completion-menu fallback stays empty for a client
// with ghost text.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ACCEPTED_COMMAND, acceptConfidentText, confidentText } from '../src/confidence';
import { CAPABILITIES, startServer } from './server';

// Many places to complete: with the tests' random weights most suggestions are undecodable bytes
// (cut to nothing), so the test looks for a line end with a real one (deterministic model).
const LINES = ['import os', '', '', 'def add(a, b):', '    return a', '', '', 'total = 0', "name = 'a'",
  'values = [1, 2]', 'result = add(1, 2)', ...Array.from({ length: 24 }, (_, i) => `item_${i} = values[${i % 2}] + total * ${i}`)];
const TEXT = LINES.join('\n') + '\n';
const URI = 'file:///tmp/mercury-vscode-test/demo.py';

interface InlineItem { insertText: string; command?: { command: string; arguments?: unknown[] }; range: { start: { line: number; character: number }; end: { line: number; character: number } } }

test('inline completion round trip', async () => {
  const server = await startServer({ capabilities: CAPABILITIES,
    initializationOptions: { syntaxGuard: 'off', maxTokens: 16 } });
  try {
    await server.ready;
    const { conn } = server;
    await conn.sendNotification('textDocument/didOpen',
      { textDocument: { uri: URI, languageId: 'python', version: 1, text: TEXT } });
    let found: { line: number; item: InlineItem } | undefined;
    for (let line = 0; line < LINES.length && !found; line++) {
      if (!LINES[line].trim()) continue;
      const result = await conn.sendRequest<{ items: InlineItem[] }>('textDocument/inlineCompletion', {
        textDocument: { uri: URI }, position: { line, character: LINES[line].length },
        context: { triggerKind: 1 } });
      const item = result.items[0];
      if (item && item.insertText.length > LINES[line].length) found = { line, item };
    }
    assert.ok(found, 'no position with a suggestion');
    const { line, item } = found;
    assert.deepEqual(item.range, { start: { line, character: 0 }, end: { line, character: LINES[line].length } });
    assert.ok(item.insertText.startsWith(LINES[line]), 'the item starts with the typed line');
    // The accepted command: the client runs it after inserting; the server counts it.
    assert.equal(item.command?.command, ACCEPTED_COMMAND);
    const confident = confidentText(item);
    assert.ok(confident === undefined || (confident.length < item.insertText.length && confident.startsWith(LINES[line])));
    // The confident-part key at the end of the line (the whole item when every token is confident).
    const lineStart = LINES.slice(0, line).join('\n').length + (line > 0 ? 1 : 0);
    const lineEnd = lineStart + LINES[line].length;
    const accepted = acceptConfidentText(TEXT, lineStart, lineEnd, lineEnd, confident ?? item.insertText);
    assert.equal(accepted.text.split('\n')[line], confident ?? item.insertText);
    assert.equal(accepted.cursor, lineStart + (confident ?? item.insertText).length);
    await conn.sendRequest('workspace/executeCommand', { command: ACCEPTED_COMMAND, arguments: item.command?.arguments });
    await conn.sendRequest('workspace/executeCommand', { command: ACCEPTED_COMMAND, arguments: [{ partial: true }] });
    const stats = await conn.sendRequest<{ counters: { accepted: number; acceptedConfident: number } }>('mercury/stats', {});
    assert.deepEqual([stats.counters.accepted, stats.counters.acceptedConfident], [2, 1]);
    // The completion menu stays empty for a client that shows ghost text (no duplicates).
    const menu = await conn.sendRequest<{ items: unknown[] }>('textDocument/completion',
      { textDocument: { uri: URI }, position: { line, character: LINES[line].length } });
    assert.deepEqual(menu.items, []);
    assert.equal(server.messages.length, 0, JSON.stringify(server.messages));
  } finally {
    await server.close();
  }
});
