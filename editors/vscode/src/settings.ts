// Settings sync: the server receives exactly its typed settings (mercury_lsp/config.py), never
// the client-side keys that live in the same "mercury" section.
import * as vscode from 'vscode';

export const SECTION = 'mercury';
/** Keys of the "mercury" section that only the client reads (never sent to the server). */
export const CLIENT_KEYS: ReadonlySet<string> = new Set(['enable', 'serverPath', 'languages', 'trace']);
export const DEFAULT_LANGUAGES = [
  'python', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact', 'go', 'rust', 'java', 'c',
  'cpp', 'lua', 'shellscript',
];

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface ClientOptions {
  enable: boolean;
  serverPath: string;
  languages: string[];
}

/** The client-side options. */
export function clientOptions(): ClientOptions {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  return {
    enable: cfg.get<boolean>('enable', true),
    serverPath: cfg.get<string>('serverPath', 'mercury-lsp') || 'mercury-lsp',
    languages: cfg.get<string[]>('languages', DEFAULT_LANGUAGES),
  };
}

/** Plain JSON copy of a configuration value (VS Code hands out proxies; drops functions). */
function plain(value: unknown): Json | undefined {
  if (value === undefined || typeof value === 'function') return undefined;
  if (value === null || typeof value !== 'object') return value as Json;
  if (Array.isArray(value)) return value.map((v) => plain(v) ?? null);
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const p = plain(v);
    if (p !== undefined) out[k] = p;
  }
  return out;
}

/**
 * The server's settings as the user configured them: only keys they set (anywhere: user,
 * workspace, folder), so the server's own defaults apply to the rest, without client keys.
 */
export function serverSettings(): { [key: string]: Json } {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  const whole = plain(cfg) as { [key: string]: Json } | undefined;
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(whole ?? {})) {
    if (CLIENT_KEYS.has(key)) continue;
    const set = setValue(cfg, key);
    if (set !== undefined) out[key] = set;
  }
  return out;
}

/** The value the user set for ``key`` (nested objects: only their set leaves), or undefined. */
function setValue(cfg: vscode.WorkspaceConfiguration, key: string): Json | undefined {
  const info = cfg.inspect(key);
  if (info === undefined) return undefined;
  const layers = [info.globalValue, info.workspaceValue, info.workspaceFolderValue];
  let found: Json | undefined;
  for (const layer of layers) {
    const value = plain(layer);
    if (value === undefined) continue;
    found = isObject(found) && isObject(value) ? { ...found, ...value } : value;
  }
  if (found === undefined) {
    // A nested section whose leaves are contributed one by one ("mercury.nextEdit.maxDocuments").
    const value = plain(cfg.get(key));
    if (isObject(value)) {
      const nested: { [key: string]: Json } = {};
      for (const leaf of Object.keys(value)) {
        const v = setValue(cfg, `${key}.${leaf}`);
        if (v !== undefined) nested[leaf] = v;
      }
      return Object.keys(nested).length ? nested : undefined;
    }
  }
  return found;
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Answers the server's workspace/configuration items (section "mercury": the server settings). */
export function configurationItems(items: { section?: string }[]): (Json | null)[] {
  return items.map((item) => (item.section === SECTION || item.section === undefined ? serverSettings() : null));
}
