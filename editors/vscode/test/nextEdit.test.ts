// Next edit against the real server: the user renames a parameter at its definition; the
// rendering model shows a mark at every other occurrence, Tab jumps to the next one and accepts
// it (the document changes, the server is told), until the file is right. Also Copilot's
// `textDocument/copilotInlineEdit` round trip.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { NextEditModel, NextEditResult } from '../src/nextEditModel';
import type { ProtocolConnection } from 'vscode-languageserver-protocol/node';

import { CAPABILITIES, startServer } from './server';

const SOURCE = 'def area(width, height):\n    label = "é" if width else "ü"\n    total = width * height\n'
  + '    return total + width  # width\n\n\nprint(area(1, 2))\n';
const RENAMED = SOURCE.replace('area(width', 'area(w');
const EXPECTED = SOURCE.replaceAll('width', 'w').replace('# w', '# width');
const URI = 'file:///tmp/mercury-vscode-test/area.py';

/** The real server with area.py open and its parameter renamed at the definition (version 2). */
async function withRenamedArea(body: (conn: ProtocolConnection) => Promise<void>): Promise<void> {
  const server = await startServer({ capabilities: CAPABILITIES });
  try {
    await server.ready;
    const { conn } = server;
    await conn.sendNotification('textDocument/didOpen',
      { textDocument: { uri: URI, languageId: 'python', version: 1, text: SOURCE } });
    await conn.sendNotification('textDocument/didChange', { textDocument: { uri: URI, version: 2 },
      contentChanges: [{ range: { start: { line: 0, character: 9 }, end: { line: 0, character: 14 } }, text: 'w' }] });
    await body(conn);
  } finally {
    await server.close();
  }
}

test('next edit: marks at every location, Tab jumps then accepts, across the file', () => withRenamedArea(async (conn) => {
  let version = 2;
  let text = RENAMED;
  const result = await conn.sendRequest<NextEditResult>('mercury/nextEdit',
    { textDocument: { uri: URI, version }, position: { line: 0, character: 10 } });
  const model = new NextEditModel(URI, version, result);
  assert.equal(model.size, 3);
  let cursor = { line: 0, character: 10 };
  let marks = model.marks(URI, cursor);
  assert.deepEqual(marks.map((m) => [m.range.start.line, m.range.start.character, m.oldText, m.newText]),
    [[1, 19, 'width', 'w'], [2, 12, 'width', 'w'], [3, 19, 'width', 'w']]);
  assert.deepEqual(marks.map((m) => m.current), [true, false, false]);
  assert.match(marks[0].hover, /confidence \d+%/);
  let steps = 0;
  while (model.size > 0 && steps++ < 10) {
    const action = model.tab(URI, cursor);
    if (action.kind === 'jump') {
      cursor = action.position;
      continue;
    }
    assert.equal(action.kind, 'accept');
    if (action.kind !== 'accept') break;
    const edit = action.edit;
    text = NextEditModel.apply(text, [edit]);
    version += 1;
    await conn.sendNotification('textDocument/didChange', { textDocument: { uri: URI, version },
      contentChanges: [{ range: edit.range, text: edit.newText }] });
    model.accepted(edit, version);
    cursor = { line: edit.range.start.line, character: edit.range.start.character + edit.newText.length };
  }
  assert.equal(steps, 6); // three jumps, three accepts
  assert.equal(text, EXPECTED);
  // The server agrees: nothing more to predict at the definition.
  const after = await conn.sendRequest<NextEditResult>('mercury/nextEdit',
    { textDocument: { uri: URI, version }, position: { line: 0, character: 10 } });
  assert.deepEqual(after.edits, []);
}));

test('copilotInlineEdit: the same edits in Copilot\'s shape, refused for an old version', () => withRenamedArea(async (conn) => {
  const result = await conn.sendRequest<{ edits: { text: string; range: unknown; textDocument: { uri: string; version: number } }[] }>(
    'textDocument/copilotInlineEdit', { textDocument: { uri: URI, version: 2 }, position: { line: 0, character: 10 } });
  assert.equal(result.edits.length, 3);
  for (const e of result.edits) {
    assert.equal(e.text, 'w');
    assert.deepEqual(e.textDocument, { uri: URI, version: 2 });
  }
  await assert.rejects(conn.sendRequest('mercury/nextEdit',
    { textDocument: { uri: URI, version: 1 }, position: { line: 0, character: 10 } }));
}));
