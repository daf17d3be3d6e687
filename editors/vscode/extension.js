// Minimal VS Code client for mercury-lsp: VS Code renders textDocument/inlineCompletion as ghost
// text natively (vscode-languageclient >= 9 wires it up); settings under "mercury.*" are sent as
// initializationOptions and on change.
const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function settings() {
  const cfg = vscode.workspace.getConfiguration('mercury');
  const out = {};
  for (const key of ['model', 'preset', 'maxTokens', 'debounceMs', 'typeahead', 'enabledLanguages', 'logLevel', 'debugLogUserCode']) {
    const value = cfg.get(key);
    if (value !== undefined && value !== null) out[key] = value;
  }
  return out;
}

async function activate(context) {
  const command = vscode.workspace.getConfiguration('mercury').get('serverPath') || 'mercury-lsp';
  const serverOptions = { command, args: ['serve'], transport: TransportKind.stdio };
  const clientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    initializationOptions: settings(),
    synchronize: { configurationSection: 'mercury' },
  };
  client = new LanguageClient('mercury', 'mercury-lsp', serverOptions, clientOptions);
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.text = 'mercury: starting';
  status.show();
  context.subscriptions.push(status);
  client.onNotification('mercury/status', (s) => { status.text = `mercury: ${s.state}`; status.tooltip = s.message; });
  await client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
