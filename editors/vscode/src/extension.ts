// mercury-lsp for VS Code: ghost text (LSP inline completion, a standard feature of
// vscode-languageclient 10), next-edit suggestions rendered as decorations (Tab: jump, then
// accept), a status-bar item and the settings of mercury_lsp/config.py.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State as ClientState, TransportKind }
  from 'vscode-languageclient/node';

import { ACCEPTED_COMMAND, acceptConfidentText, confidentText } from './confidence';
import {
  checkEdit, DocumentView, insertedEnd, NEXT_EDIT_UPDATE_NOTIFICATION, NextEditModel, NextEditResult, NextEditUpdate,
  Position, PredictedEdit,
} from './nextEditModel';
import { clientOptions, configurationItems, SECTION, serverSettings } from './settings';
import { fromNotification, State, view } from './status';

const NEXT_EDIT_REQUEST = 'mercury/nextEdit';
const STATUS_NOTIFICATION = 'mercury/status';
const VISIBLE_CONTEXT = 'mercury.nextEditVisible';

let client: LanguageClient | undefined;
let status: vscode.StatusBarItem;
let output: vscode.LogOutputChannel;
let nextEdit: NextEditView;
let lastInline: { uri: string; version: number; items: vscode.InlineCompletionItem[] } | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('mercury-lsp', { log: true });
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.command = 'mercury.toggle';
  nextEdit = new NextEditView();
  context.subscriptions.push(output, status, nextEdit,
    vscode.commands.registerCommand('mercury.toggle', toggle),
    vscode.commands.registerCommand('mercury.showLog', () => output.show(true)),
    vscode.commands.registerCommand('mercury.restart', restart),
    vscode.commands.registerCommand('mercury.nextEdit', () => nextEdit.request()),
    vscode.commands.registerCommand('mercury.applyNextEdit', () => nextEdit.tab()),
    vscode.commands.registerCommand('mercury.dismissNextEdit', () => nextEdit.clear()),
    vscode.commands.registerCommand('mercury.acceptConfident', acceptConfident),
    vscode.workspace.onDidChangeConfiguration(onConfiguration),
    vscode.window.onDidChangeTextEditorSelection((e) => nextEdit.render(e.textEditor)),
    vscode.window.onDidChangeActiveTextEditor((e) => nextEdit.render(e)),
    vscode.workspace.onDidChangeTextDocument((e) => nextEdit.documentChanged(e.document)),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

function setStatus(state: State, message = ''): void {
  const v = view(state, message);
  status.text = v.text;
  status.tooltip = v.tooltip;
  status.command = state === 'error' ? 'mercury.showLog' : 'mercury.toggle';
  status.backgroundColor = v.error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  status.show();
}

async function start(): Promise<void> {
  const opts = clientOptions();
  if (!opts.enable) {
    setStatus('disabled');
    return;
  }
  setStatus('starting');
  const serverOptions: ServerOptions = { command: opts.serverPath, args: ['serve'], transport: TransportKind.stdio };
  const documentSelector = opts.languages.flatMap((language) => [
    { language, scheme: 'file' }, { language, scheme: 'untitled' }]);
  const options: LanguageClientOptions = {
    documentSelector,
    outputChannel: output,
    initializationOptions: () => serverSettings(),
    middleware: {
      workspace: { configuration: (params) => configurationItems(params.items) },
      provideInlineCompletionItems: async (document, position, ctx, token, next) => {
        const result = await next(document, position, ctx, token);
        const items = Array.isArray(result) ? result : result?.items ?? [];
        lastInline = { uri: document.uri.toString(), version: document.version, items };
        return result;
      },
    },
  };
  client = new LanguageClient('mercury', 'mercury-lsp', serverOptions, options);
  client.onDidChangeState((e) => {
    if (e.newState === ClientState.Stopped) setStatus(clientOptions().enable ? 'stopped' : 'disabled');
  });
  try {
    await client.start();
  } catch (err) {
    setStatus('error', String(err));
    output.error(`could not start ${opts.serverPath}: ${String(err)}`);
    return;
  }
  client.onNotification(STATUS_NOTIFICATION, (params) => {
    const s = fromNotification(params);
    setStatus(s.state, s.message);
  });
  client.onNotification(NEXT_EDIT_UPDATE_NOTIFICATION, (params: NextEditUpdate) => nextEdit.update(params));
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  nextEdit?.clear();
  if (c) await c.stop();
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

async function toggle(): Promise<void> {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  await cfg.update('enable', !clientOptions().enable, vscode.ConfigurationTarget.Global);
}

async function onConfiguration(e: vscode.ConfigurationChangeEvent): Promise<void> {
  if (!e.affectsConfiguration(SECTION)) return;
  const clientSide = ['enable', 'serverPath', 'languages'].some((k) => e.affectsConfiguration(`${SECTION}.${k}`));
  if (clientSide) {
    await restart();
    return;
  }
  await client?.sendNotification('workspace/didChangeConfiguration', { settings: { [SECTION]: serverSettings() } });
}

async function acceptConfident(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const last = lastInline;
  if (!editor || !last || last.uri !== editor.document.uri.toString() || last.version !== editor.document.version) {
    return;
  }
  const item = last.items[0];
  const confident = confidentText(item);
  if (!item || !item.range || confident === undefined) {
    await vscode.commands.executeCommand('editor.action.inlineSuggest.commit');
    return;
  }
  const doc = editor.document;
  const start = doc.offsetAt(item.range.start);
  const end = doc.offsetAt(item.range.end);
  const after = acceptConfidentText(doc.getText(), start, end, doc.offsetAt(editor.selection.active), confident);
  await vscode.commands.executeCommand('editor.action.inlineSuggest.hide');
  if (!(await editor.edit((b) => b.replace(item.range!, confident)))) return;
  const position = doc.positionAt(after.cursor);
  editor.selection = new vscode.Selection(position, position);
  await client?.sendRequest('workspace/executeCommand', { command: ACCEPTED_COMMAND, arguments: [{ partial: true }] });
}

// ------------------------------------------------------------------------------ next edit
function toRange(r: { start: { line: number; character: number }; end: { line: number; character: number } }) {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

/** A document as the next-edit checks see it (version: the one the server was last told). */
function documentView(doc: vscode.TextDocument): DocumentView {
  return { version: doc.version, text: (r) => doc.getText(toRange(r)) };
}

/**
 * Shows the pending predicted edits of the editor's file; Tab jumps to one (opening the file it is
 * in), then accepts it. The answer's edits (open documents) come first; the workspace files' edits
 * arrive later as one `mercury/nextEditUpdate`, merged when it answers the current request.
 */
class NextEditView implements vscode.Disposable {
  private model: NextEditModel | undefined;
  private applying = false;
  private readonly removed = vscode.window.createTextEditorDecorationType({
    textDecoration: 'line-through', backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
  });
  private readonly added = vscode.window.createTextEditorDecorationType({});
  private readonly current = vscode.window.createTextEditorDecorationType({
    border: '1px solid', borderColor: new vscode.ThemeColor('editorCursor.foreground'),
  });
  /** Updates that arrived before their request's answer was handled (uri@version). */
  private early = new Map<string, NextEditUpdate>();

  dispose(): void {
    this.removed.dispose(); this.added.dispose(); this.current.dispose();
  }

  async request(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || !client) return;
    const doc = editor.document;
    const params = {
      textDocument: { uri: doc.uri.toString(), version: doc.version },
      position: { line: editor.selection.active.line, character: editor.selection.active.character },
    };
    this.clear();
    this.early.clear();
    let result: NextEditResult;
    try {
      result = await client.sendRequest<NextEditResult>(NEXT_EDIT_REQUEST, params);
    } catch (err) {
      output.warn(`next edit failed: ${String(err)}`);
      return;
    }
    if (doc.version !== params.textDocument.version) return; // the user moved on
    const model = new NextEditModel(doc.uri.toString(), doc.version, result);
    this.model = model;
    const early = this.early.get(`${model.uri}@${model.requestVersion}`);
    this.early.clear();
    if (early) model.merge(early);
    this.shown(editor);
  }

  /** `mercury/nextEditUpdate`: the workspace files' edits, merged if they answer the current request. */
  update(update: NextEditUpdate): void {
    const model = this.model;
    if (!model) {
      this.early.set(`${update.textDocument.uri}@${update.textDocument.version ?? null}`, update);
      return;
    }
    if (!model.merge(update)) {
      output.debug(`dropped a stale next-edit update for ${update.textDocument.uri}`);
      return;
    }
    this.shown(vscode.window.activeTextEditor);
  }

  /** After the model got edits (or none): render, or say that nothing was predicted. */
  private shown(editor: vscode.TextEditor | undefined): void {
    const model = this.model;
    if (!model) return;
    if (model.size === 0 && !model.awaitingUpdate) {
      vscode.window.setStatusBarMessage('mercury: no next edit predicted', 3000);
      this.clear();
      return;
    }
    this.render(editor);
  }

  render(editor: vscode.TextEditor | undefined): void {
    const model = this.model;
    if (!editor || !model) return;
    const cursor = editor.selection.active;
    const marks = model.marks(editor.document.uri.toString(), { line: cursor.line, character: cursor.character });
    editor.setDecorations(this.removed, marks.filter((m) => m.oldText).map((m) => ({
      range: toRange(m.range), hoverMessage: m.hover })));
    editor.setDecorations(this.added, marks.map((m) => ({
      range: toRange({ start: m.range.end, end: m.range.end }), hoverMessage: m.hover,
      renderOptions: { after: { contentText: m.newText.replace(/\n/g, '⏎'), fontStyle: 'italic',
        color: new vscode.ThemeColor('editorGhostText.foreground'),
        backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground') } },
    })));
    editor.setDecorations(this.current, marks.filter((m) => m.current).map((m) => toRange(m.range)));
    void vscode.commands.executeCommand('setContext', VISIBLE_CONTEXT, model.size > 0);
  }

  documentChanged(doc: vscode.TextDocument): void {
    const model = this.model;
    if (this.applying || !model) return;
    const uri = doc.uri.toString();
    if (uri === model.uri) {
      this.clear(); // the predictions were for the text before this change
    } else if (model.editsOf(uri).length > 0) {
      model.drop(uri);
      this.shown(vscode.window.activeTextEditor);
    }
  }

  async tab(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const model = this.model;
    if (!editor || !model) return;
    const uri = editor.document.uri.toString();
    if (uri === model.uri && editor.document.version !== model.version) {
      this.clear();
      return;
    }
    const cursor = editor.selection.active;
    const action = model.tab(uri, { line: cursor.line, character: cursor.character });
    if (action.kind === 'jump') {
      await this.jump(editor, model, action.uri, action.position);
      return;
    } else if (action.kind === 'accept') {
      await this.accept(model, action.edit);
    }
    if (this.model === model) this.shown(editor);
  }

  /** Move the cursor to a predicted edit, opening its file (checked first: a file on disk may
   * have changed since the prediction) when it is another one. */
  private async jump(editor: vscode.TextEditor, model: NextEditModel, uri: string, position: Position): Promise<void> {
    let target = editor;
    if (uri !== editor.document.uri.toString()) {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
      for (const why of model.validate(uri, documentView(doc))) output.info(`next edit dropped: ${why}`);
      const first = model.editsOf(uri)[0];
      if (!first) {
        this.shown(editor);
        return;
      }
      position = first.range.start;
      target = await vscode.window.showTextDocument(doc);
    }
    const p = new vscode.Position(position.line, position.character);
    target.selection = new vscode.Selection(p, p);
    target.revealRange(new vscode.Range(p, p), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    this.render(target);
  }

  /** Apply one edit as a WorkspaceEdit, after the checks the server's edits call for (the
   * document's version, or for a file on disk the text the edit replaces). */
  private async accept(model: NextEditModel, edit: PredictedEdit): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(edit.uri));
    const why = checkEdit(edit, documentView(doc));
    if (why) {
      output.info(`next edit dropped: ${why}`);
      model.validate(edit.uri, documentView(doc));
      return;
    }
    const change = new vscode.WorkspaceEdit();
    change.replace(doc.uri, toRange(edit.range), edit.newText);
    this.applying = true;
    try {
      if (!(await vscode.workspace.applyEdit(change))) return;
      model.accepted(edit, doc.version);
    } finally {
      this.applying = false;
    }
    const end = insertedEnd(edit);
    const editor = vscode.window.activeTextEditor;
    if (editor && editor.document === doc) {
      const p = new vscode.Position(end.line, end.character);
      editor.selection = new vscode.Selection(p, p);
    }
  }

  clear(): void {
    this.model = undefined;
    for (const editor of vscode.window.visibleTextEditors) {
      editor.setDecorations(this.removed, []);
      editor.setDecorations(this.added, []);
      editor.setDecorations(this.current, []);
    }
    void vscode.commands.executeCommand('setContext', VISIBLE_CONTEXT, false);
  }
}
