// Starts the real mercury-lsp server (the command in MERCURY_SERVER_CMD, a JSON array; default
// `mercury-lsp serve`) and talks to it with vscode-languageserver-protocol, as a client would.
import { ChildProcess, spawn } from 'node:child_process';
import {
  ClientCapabilities, CodeActionKind, createProtocolConnection, MarkupKind, PositionEncodingKind, InitializeParams, ProtocolConnection, StreamMessageReader, StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';

export interface Server {
  conn: ProtocolConnection;
  messages: { type: number; message: string }[];
  ready: Promise<void>;
  /** Resolves with the next window/showMessage (or rejects after `timeoutMs`). */
  nextMessage(timeoutMs: number): Promise<{ type: number; message: string }>;
  close(): Promise<void>;
}

export function serverCommand(): string[] {
  return process.env.MERCURY_SERVER_CMD ? JSON.parse(process.env.MERCURY_SERVER_CMD) : ['mercury-lsp', 'serve'];
}

export async function startServer(init: Partial<InitializeParams>,
  onConfiguration?: (items: { section?: string }[]) => unknown[]): Promise<Server> {
  const [cmd, ...args] = serverCommand();
  const proc: ChildProcess = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (b) => { stderr += b.toString(); });
  const conn = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  const messages: { type: number; message: string }[] = [];
  const waiters: ((m: { type: number; message: string }) => void)[] = [];
  conn.onNotification('window/showMessage', (p: { type: number; message: string }) => {
    messages.push(p);
    waiters.splice(0).forEach((w) => w(p));
  });
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onNotification('$/progress', () => undefined);
  conn.onNotification('window/logMessage', () => undefined);
  conn.onRequest('workspace/configuration', (p: { items: { section?: string }[] }) =>
    (onConfiguration ? onConfiguration(p.items) : p.items.map(() => null)));
  let resolveReady!: () => void;
  let rejectReady!: (e: Error) => void;
  const ready = new Promise<void>((res, rej) => { resolveReady = res; rejectReady = rej; });
  conn.onNotification('mercury/status', (p: { state: string; message: string }) => {
    if (p.state === 'ready') resolveReady();
    if (p.state === 'error') rejectReady(new Error(p.message));
  });
  proc.on('exit', (code) => rejectReady(new Error(`server exited (${code}): ${stderr.slice(-2000)}`)));
  conn.listen();
  await conn.sendRequest('initialize', {
    processId: process.pid, rootUri: null, workspaceFolders: null, capabilities: {}, ...init,
  } as InitializeParams);
  await conn.sendNotification('initialized', {});
  return {
    conn, messages, ready,
    nextMessage(timeoutMs) {
      return new Promise((res, rej) => {
        const timer = setTimeout(() => rej(new Error('no window/showMessage')), timeoutMs);
        waiters.push((m) => { clearTimeout(timer); res(m); });
      });
    },
    async close() {
      try {
        await conn.sendRequest('shutdown');
        await conn.sendNotification('exit');
      } catch { /* already gone */ }
      await new Promise<void>((res) => (proc.exitCode !== null ? res() : proc.once('exit', () => res())));
      conn.dispose();
    },
  };
}

/** A client capability set like vscode-languageclient 10's for the features used here. */
export const CAPABILITIES: ClientCapabilities = {
  general: { positionEncodings: [PositionEncodingKind.UTF16] },
  window: { workDoneProgress: true, showMessage: {} },
  workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true } },
  textDocument: {
    synchronization: { dynamicRegistration: true, didSave: true },
    inlineCompletion: { dynamicRegistration: true },
    completion: { completionItem: { snippetSupport: true, documentationFormat: [MarkupKind.Markdown, MarkupKind.PlainText] } },
    codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: [CodeActionKind.RefactorRewrite] } } },
  },
};
