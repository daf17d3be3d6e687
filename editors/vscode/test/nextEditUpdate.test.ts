// Cross-file next edit against the real server: renaming a function at its definition answers the
// open documents' edits at once, then one `mercury/nextEditUpdate` brings those of a workspace
// file that is not open. The controller the extension drives (an in-memory editor standing in for
// VS Code: documents opened tell the server, edits are applied and sent as didChange) merges the
// update of its own request only, also when it arrives before the answer is handled (a stale one
// is dropped), and Tab visits every edit: this file, the other open one, then the file that was
// not open (opened on the jump, checked against its text before each accept).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

import type { ProtocolConnection } from 'vscode-languageserver-protocol/node';

import { EditorHost, NextEditController } from '../src/nextEditController';
import {
  checkEdit, CROSS_FILE_UPDATE, NEXT_EDIT_UPDATE_NOTIFICATION, NextEditModel, NextEditResult, NextEditUpdate, Position,
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

/** An editor over the files on disk: open documents with versions, one cursor; every open and
 * change is sent to the server as VS Code's language client would. */
class MemoryEditor implements EditorHost {
  texts: Record<string, string> = {};
  versions: Record<string, number> = {};
  at = { uri: '', position: { line: 0, character: 0 } as Position };
  visited: string[] = [];
  logs: string[] = [];

  constructor(private readonly conn: ProtocolConnection, private readonly disk: (uri: string) => string) {}

  async open(uri: string) {
    if (this.versions[uri] === undefined) {
      this.texts[uri] = this.disk(uri);
      this.versions[uri] = 1;
      await this.conn.sendNotification('textDocument/didOpen',
        { textDocument: { uri, languageId: 'python', version: 1, text: this.texts[uri] } });
    }
    return NextEditModel.view(this.texts[uri], this.versions[uri]);
  }

  async reveal(uri: string, position: Position) {
    this.at = { uri, position };
    if (this.visited[this.visited.length - 1] !== uri) this.visited.push(uri);
  }

  async replace(uri: string, range: NextEditResult['edits'][number]['range'], text: string) {
    this.texts[uri] = NextEditModel.apply(this.texts[uri], [{ uri, range, newText: text, confidence: 1, reason: '' }]);
    this.versions[uri] += 1;
    await this.conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: this.versions[uri] },
      contentChanges: [{ range, text }] });
    return this.versions[uri];
  }

  log(message: string) { this.logs.push(message); }
}

function editorFor(ws: Workspace, root: (uri: string) => string): MemoryEditor {
  const editor = new MemoryEditor(ws.conn, root);
  const shapes = ws.uri('shapes.py');
  // As the workspace was set up: shapes.py (renamed, version 2) and report.py open.
  editor.texts[shapes] = FILES['shapes.py'].replace('def area', 'def surface');
  editor.versions[shapes] = 2;
  editor.texts[ws.uri('report.py')] = FILES['report.py'];
  editor.versions[ws.uri('report.py')] = 1;
  editor.at = { uri: shapes, position: { line: 0, character: 11 } };
  editor.visited = [shapes];
  return editor;
}

test('next edit update: merged into its own request (even early), stale ones dropped, Tab visits every file', () => withRenamed(async (ws) => {
  const { conn, uri, updates } = ws;
  const shapes = uri('shapes.py');
  const report = uri('report.py');
  const uses = uri('uses.py');
  const editor = editorFor(ws, (u) => FILES[u.slice(u.lastIndexOf('/') + 1)]);
  const controller = new NextEditController(editor, () => undefined);
  controller.begin();
  const result = await conn.sendRequest<NextEditResult>('mercury/nextEdit',
    { textDocument: { uri: shapes, version: 2 }, position: { line: 0, character: 11 } });
  assert.equal(result.updatePending, true);
  assert.deepEqual([...new Set(result.edits.map((e) => e.uri))].sort(), [report, shapes].sort()); // open ones
  // The update arrives before the answer is handled (the extension awaits the request): kept,
  // then merged into the model of that request.
  const update = await waitFor(() => updates[0], 60000);
  assert.equal(update.update, CROSS_FILE_UPDATE);
  assert.equal(controller.update(update), false);
  assert.equal(controller.model, undefined);
  const model = controller.answered(shapes, 2, result);
  assert.equal(model.awaitingUpdate, false);
  assert.deepEqual(model.uris, [shapes, report, uses]);
  assert.ok(model.editsOf(uses).every((e) => e.documentVersion === null && e.oldText === 'area'));
  // Updates of another request are stale: an older version of the document, another document,
  // another part; and one update per answer.
  assert.equal(controller.update({ ...update, textDocument: { uri: shapes, version: 1 } }), false);
  assert.equal(controller.update({ ...update, textDocument: { uri: report, version: 2 } }), false);
  assert.equal(controller.update({ ...update, update: 3 }), false);
  assert.equal(controller.update(update), false);
  assert.equal(editor.logs.filter((l) => l.startsWith('dropped a stale next-edit update')).length, 4);
  assert.equal(model.size, 5);

  let steps = 0;
  while (controller.model && steps++ < 20) {
    await controller.tab(editor.at.uri, editor.versions[editor.at.uri], editor.at.position);
  }
  assert.deepEqual(editor.visited, [shapes, report, uses]);
  assert.equal(steps, 10); // a jump and an accept per location: 1 + 2 + 2
  assert.equal(editor.texts[shapes], FILES['shapes.py'].replaceAll('area', 'surface'));
  assert.equal(editor.texts[report], FILES['report.py'].replaceAll('area', 'surface'));
  assert.equal(editor.texts[uses], FILES['uses.py'].replaceAll('area', 'surface'));
  assert.deepEqual(editor.logs.filter((l) => l.startsWith('next edit dropped')), []);
  assert.equal(updates.length, 1);
}));

test('next edit update: a file that changed since the prediction, or that the user edits, loses its edits', () => withRenamed(async (ws) => {
  const { conn, uri, updates } = ws;
  const shapes = uri('shapes.py');
  const report = uri('report.py');
  const uses = uri('uses.py');
  // The user changed the call in uses.py on disk (another editor, git) after the prediction.
  const changedCall = FILES['uses.py'].replace('sum(area(', 'sum(aarea(');
  const editor = editorFor(ws, (u) => (u === uses ? changedCall : FILES[u.slice(u.lastIndexOf('/') + 1)]));
  const controller = new NextEditController(editor, () => undefined);
  controller.begin();
  const result = await conn.sendRequest<NextEditResult>('mercury/nextEdit',
    { textDocument: { uri: shapes, version: 2 }, position: { line: 0, character: 11 } });
  const model = controller.answered(shapes, 2, result);
  assert.equal(model.awaitingUpdate, true);
  assert.equal(controller.update(await waitFor(() => updates[0], 60000)), true);
  assert.equal(model.editsOf(uses).length, 2);
  assert.match(checkEdit(model.editsOf(uses)[1], NextEditModel.view(changedCall, 1)) ?? '', /changed at line 5/);
  // An open document's edit needs its version.
  assert.match(checkEdit(model.editsOf(report)[0], NextEditModel.view(FILES['report.py'], 7)) ?? '', /version 7/);
  // The user edits report.py: its edits go, the others stay.
  controller.documentChanged(report);
  assert.deepEqual(model.uris, [shapes, uses]);
  let steps = 0;
  while (controller.model && steps++ < 20) {
    await controller.tab(editor.at.uri, editor.versions[editor.at.uri], editor.at.position);
  }
  assert.deepEqual(editor.visited, [shapes, uses]);
  assert.equal(editor.logs.filter((l) => l.startsWith('next edit dropped')).length, 1); // the changed call
  assert.equal(editor.texts[uses], changedCall.replace('import area', 'import surface'));
  assert.equal(editor.texts[report], FILES['report.py']);
  // The user moves on in shapes.py: Tab there clears what is left.
  controller.begin();
  const again = controller.answered(shapes, editor.versions[shapes], { edits: model.editsOf(shapes), updatePending: true });
  assert.equal(again.awaitingUpdate, true);
  await controller.tab(shapes, editor.versions[shapes] + 1, { line: 0, character: 0 });
  assert.equal(controller.model, undefined);
}));
