// mercury-lsp for VS Code: ghost text (LSP inline completion, a standard feature of
// vscode-languageclient 10), next-edit suggestions rendered as decorations (Tab: jump, then
// accept), a status-bar item and the settings of mercury_lsp/config.py.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State as ClientState, TransportKind }
  from 'vscode-languageclient/node';

import { ACCEPTED_COMMAND, acceptConfidentText, confidentText } from './confidence';
import { EditorHost, NextEditController } from './nextEditController';
import { DocumentView, NEXT_EDIT_UPDATE_NOTIFICATION, NextEditResult, NextEditUpdate } from './nextEditModel';
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

/** The editor for the next-edit controller: documents opened through VS Code (so the language
 * client tells the server), edits applied as WorkspaceEdits. */
const editorHost: EditorHost = {
  async open(uri) {
    return documentView(await vscode.workspace.openTextDocument(vscode.Uri.parse(uri)));
  },
  async reveal(uri, position) {
    const active = vscode.window.activeTextEditor;
    const editor = active && active.document.uri.toString() === uri ? active
      : await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(vscode.Uri.parse(uri)));
    const p = new vscode.Position(position.line, position.character);
    editor.selection = new vscode.Selection(p, p);
    editor.revealRange(new vscode.Range(p, p), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  },
  async replace(uri, range, text) {
    const change = new vscode.WorkspaceEdit();
    const target = vscode.Uri.parse(uri);
    change.replace(target, toRange(range), text);
    if (!(await vscode.workspace.applyEdit(change))) return undefined;
    return (await vscode.workspace.openTextDocument(target)).version;
  },
  log: (message) => output.info(message),
};

/**
 * Shows the pending predicted edits of the editor's file as decorations; Tab jumps to one
 * (opening the file it is in), then accepts it (nextEditController.ts). The answer's edits (open
 * documents) come first; the workspace files' edits arrive later as one `mercury/nextEditUpdate`.
 */
class NextEditView implements vscode.Disposable {
  private readonly controller = new NextEditController(editorHost, () => this.render(vscode.window.activeTextEditor));
  private readonly removed = vscode.window.createTextEditorDecorationType({
    textDecoration: 'line-through', backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
  });
  private readonly added = vscode.window.createTextEditorDecorationType({});
  private readonly current = vscode.window.createTextEditorDecorationType({
    border: '1px solid', borderColor: new vscode.ThemeColor('editorCursor.foreground'),
  });

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
    this.controller.begin();
    let result: NextEditResult;
    try {
      result = await client.sendRequest<NextEditResult>(NEXT_EDIT_REQUEST, params);
    } catch (err) {
      output.warn(`next edit failed: ${String(err)}`);
      return;
    }
    if (doc.version !== params.textDocument.version) return; // the user moved on
    const model = this.controller.answered(params.textDocument.uri, params.textDocument.version, result);
    if (model.size === 0 && !model.awaitingUpdate) {
      vscode.window.setStatusBarMessage('mercury: no next edit predicted', 3000);
    }
  }

  /** `mercury/nextEditUpdate`: the workspace files' edits, merged if they answer the shown request. */
  update(update: NextEditUpdate): void {
    this.controller.update(update);
  }

  render(editor: vscode.TextEditor | undefined): void {
    const model = this.controller.model;
    for (const other of vscode.window.visibleTextEditors) {
      if (other !== editor || !model) {
        other.setDecorations(this.removed, []);
        other.setDecorations(this.added, []);
        other.setDecorations(this.current, []);
      }
    }
    void vscode.commands.executeCommand('setContext', VISIBLE_CONTEXT, (model?.size ?? 0) > 0);
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
  }

  documentChanged(doc: vscode.TextDocument): void {
    this.controller.documentChanged(doc.uri.toString());
  }

  async tab(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return;
    const cursor = editor.selection.active;
    await this.controller.tab(editor.document.uri.toString(), editor.document.version,
      { line: cursor.line, character: cursor.character });
  }

  clear(): void {
    this.controller.clear();
  }
}
