// Cross-file next edit against the real server: renaming a function at its definition answers the
// open documents' edits at once, then one `mercury/nextEditUpdate` brings those of a workspace
// file that is not open. The model merges the update of its own request only (a stale one is
// dropped), and Tab visits every edit, in this file, then the other open one, then the file that
// was not open (opened on the jump, checked against its text before accepting), as the extension
// does with WorkspaceEdits.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

import type { ProtocolConnection } from 'vscode-languageserver-protocol/node';

import {
  checkEdit, CROSS_FILE_UPDATE, insertedEnd, NEXT_EDIT_UPDATE_NOTIFICATION, NextEditModel, NextEditResult,
  NextEditUpdate, Position,
} from '../src/nextEditModel';
import { CAPABILITIES, startServer } from './server';

// The workspace of tests/mercury_lsp/refactor/test_workspace_lsp.py.
const FILES: Record<string, string> = {
  'shapes.py': 'def area(width, height):\n    return width * height\n\n\ndef square(side):\n    return area(side, side)\n',
  'uses.py': 'from shapes import area\n\n\ndef total(rects):\n    return sum(area(w, h) for w, h in rects)\n',
  'report.py': 'import shapes\nfrom shapes import area\n\nprint(area(2, 3))\n',
  'circle.py': 'def area_of_circle(r):\n    return 3.14 * r * r\n',
};

interface Workspace { conn: ProtocolConnection; uri: (name: string) => string; updates: NextEditUpdate[] }

/** The real server on a workspace of FILES with shapes.py and report.py open and `area` renamed
 * to `surface` at its definition in shapes.py (version 2). */
async function withRenamed(body: (ws: Workspace) => Promise<void>): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'mercury-vscode-ws-'));
  for (const [name, text] of Object.entries(FILES)) writeFileSync(join(root, name), text);
  const uri = (name: string) => pathToFileURL(join(root, name)).toString();
  const rootUri = pathToFileURL(root).toString();
  const server = await startServer({ capabilities: CAPABILITIES, rootUri, workspaceFolders: [{ uri: rootUri, name: 'ws' }] });
  const updates: NextEditUpdate[] = [];
  server.conn.onNotification(NEXT_EDIT_UPDATE_NOTIFICATION, (u: NextEditUpdate) => { updates.push(u); });
  try {
    await server.ready;
    const { conn } = server;
    for (const name of ['shapes.py', 'report.py']) {
      await conn.sendNotification('textDocument/didOpen',
        { textDocument: { uri: uri(name), languageId: 'python', version: 1, text: FILES[name] } });
    }
    await conn.sendNotification('textDocument/didChange', { textDocument: { uri: uri('shapes.py'), version: 2 },
      contentChanges: [{ range: { start: { line: 0, character: 4 }, end: { line: 0, character: 8 } }, text: 'surface' }] });
    await body({ conn, uri, updates });
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}

async function waitFor<T>(get: () => T | undefined, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('next edit update: merged into its own request, stale ones dropped, Tab visits every file', () => withRenamed(async ({ conn, uri, updates }) => {
  const shapes = uri('shapes.py');
  const report = uri('report.py');
  const uses = uri('uses.py');
  const result = await conn.sendRequest<NextEditResult>('mercury/nextEdit',
    { textDocument: { uri: shapes, version: 2 }, position: { line: 0, character: 11 } });
  const model = new NextEditModel(shapes, 2, result);
  assert.equal(model.awaitingUpdate, true);
  assert.deepEqual(model.uris, [shapes, report]); // the open documents: at once
  const update = await waitFor(() => updates[0], 60000);
  assert.equal(update.update, CROSS_FILE_UPDATE);
  // Updates of another request are stale: an older version of the document, another document.
  const stale = { ...update, textDocument: { uri: shapes, version: 1 } };
  assert.equal(model.merge(stale), false);
  assert.equal(model.merge({ ...update, textDocument: { uri: report, version: 2 } }), false);
  assert.equal(model.merge({ ...update, update: 3 }), false);
  assert.deepEqual(model.uris, [shapes, report]);
  assert.equal(model.merge(update), true);
  assert.equal(model.awaitingUpdate, false);
  assert.equal(model.merge(update), false); // one update per answer
  assert.deepEqual(model.uris, [shapes, report, uses]);
  assert.ok(model.editsOf(uses).every((e) => e.documentVersion === null && e.oldText === 'area'));

  // The editor: one text and version per document; uses.py is opened (didOpen) on the jump.
  const texts: Record<string, string> = {
    [shapes]: FILES['shapes.py'].replace('def area', 'def surface'), [report]: FILES['report.py'],
    [uses]: FILES['uses.py'],
  };
  const versions: Record<string, number> = { [shapes]: 2, [report]: 1 };
  let at = shapes;
  let cursor: Position = { line: 0, character: 11 };
  const visited: string[] = [];
  let steps = 0;
  while (model.size > 0 && steps++ < 20) {
    const action = model.tab(at, cursor);
    if (action.kind === 'jump') {
      if (action.uri !== at && versions[action.uri] === undefined) {
        versions[action.uri] = 1;
        await conn.sendNotification('textDocument/didOpen', { textDocument: { uri: action.uri,
          languageId: 'python', version: 1, text: texts[action.uri] } });
        assert.deepEqual(model.validate(action.uri, NextEditModel.view(texts[action.uri], 1)), []);
      }
      at = action.uri;
      cursor = action.position;
      if (visited[visited.length - 1] !== at) visited.push(at);
      continue;
    }
    assert.equal(action.kind, 'accept');
    if (action.kind !== 'accept') break;
    const edit = action.edit;
    assert.equal(checkEdit(edit, NextEditModel.view(texts[at], versions[at])), undefined);
    texts[at] = NextEditModel.apply(texts[at], [edit]);
    versions[at] += 1;
    await conn.sendNotification('textDocument/didChange', { textDocument: { uri: at, version: versions[at] },
      contentChanges: [{ range: edit.range, text: edit.newText }] });
    model.accepted(edit, versions[at]);
    cursor = insertedEnd(edit);
  }
  assert.deepEqual(visited, [shapes, report, uses]);
  assert.equal(steps, 10); // a jump and an accept per location: 1 + 2 + 2
  assert.equal(texts[shapes], FILES['shapes.py'].replaceAll('area', 'surface'));
  assert.equal(texts[report], FILES['report.py'].replaceAll('area', 'surface'));
  assert.equal(texts[uses], FILES['uses.py'].replaceAll('area', 'surface'));
  assert.equal(updates.length, 1);
}));

test('next edit update: a file on disk that changed since the prediction keeps its text', () => withRenamed(async ({ conn, uri, updates }) => {
  const shapes = uri('shapes.py');
  const uses = uri('uses.py');
  const result = await conn.sendRequest<NextEditResult>('mercury/nextEdit',
    { textDocument: { uri: shapes, version: 2 }, position: { line: 0, character: 11 } });
  const model = new NextEditModel(shapes, 2, result);
  assert.ok(model.merge(await waitFor(() => updates[0], 60000)));
  const edits = model.editsOf(uses);
  assert.equal(edits.length, 2);
  // The user changed the call in uses.py on disk (another editor, git): that edit is refused, the
  // import's edit still applies.
  const changedCall = FILES['uses.py'].replace('sum(area(', 'sum(aarea(');
  assert.match(checkEdit(edits[1], NextEditModel.view(changedCall, 1)) ?? '', /changed at line 5/);
  assert.deepEqual(model.validate(uses, NextEditModel.view(changedCall, 1)).length, 1);
  assert.deepEqual(model.editsOf(uses).map((e) => e.range.start.line), [0]);
  // An open document's edit needs its version.
  const opened = model.editsOf(uri('report.py'))[0];
  assert.match(checkEdit(opened, NextEditModel.view(FILES['report.py'], 7)) ?? '', /version 7/);
}));
