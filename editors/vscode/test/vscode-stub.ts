// A stub of the `vscode` module for node tests (esbuild aliases `vscode` to this file): the
// configuration API as VS Code implements it — contributed defaults from package.json, then the
// user's (global), workspace and folder values; dotted keys read as nested sections.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Obj = { [key: string]: unknown };
const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
const contributed: Obj = pkg.contributes.configuration.properties;

export const layers: { global: Obj; workspace: Obj; folder: Obj } = { global: {}, workspace: {}, folder: {} };

/** Reset the user's settings (flat dotted keys, as in settings.json). */
export function setUserSettings(global: Obj, workspace: Obj = {}, folder: Obj = {}): void {
  layers.global = global; layers.workspace = workspace; layers.folder = folder;
}

function nest(flat: Obj, section: string): Obj | undefined {
  let out: Obj | undefined;
  for (const [key, value] of Object.entries(flat)) {
    if (!key.startsWith(`${section}.`)) continue;
    const parts = key.slice(section.length + 1).split('.');
    out ??= {};
    let node = out;
    for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Obj;
    node[parts[parts.length - 1]] = value;
  }
  return out;
}

function lookup(obj: Obj | undefined, key: string): unknown {
  let node: unknown = obj;
  for (const p of key.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Obj)[p];
  }
  return node;
}

function merge(a: unknown, b: unknown): unknown {
  if (b === undefined) return a;
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Obj = { ...(a as Obj) };
    for (const [k, v] of Object.entries(b as Obj)) out[k] = merge(out[k], v);
    return out;
  }
  return b;
}

export enum ConfigurationTarget { Global = 1, Workspace = 2, WorkspaceFolder = 3 }

export const workspace = {
  getConfiguration(section: string) {
    const defaults: Obj = {};
    for (const [key, schema] of Object.entries(contributed)) defaults[key] = (schema as Obj).default;
    const d = nest(defaults, section);
    const g = nest(layers.global, section);
    const w = nest(layers.workspace, section);
    const f = nest(layers.folder, section);
    const effective = [g, w, f].reduce<unknown>((acc, layer) => merge(acc, layer), d) as Obj;
    const cfg: Obj = { ...effective };
    Object.defineProperties(cfg, {
      get: { enumerable: false, value: (key: string, dflt?: unknown) => lookup(effective, key) ?? dflt },
      has: { enumerable: false, value: (key: string) => lookup(effective, key) !== undefined },
      inspect: {
        enumerable: false,
        value: (key: string) => ({
          key: `${section}.${key}`, defaultValue: lookup(d, key), globalValue: lookup(g, key),
          workspaceValue: lookup(w, key), workspaceFolderValue: lookup(f, key),
        }),
      },
      update: {
        enumerable: false,
        value: async (key: string, value: unknown) => { layers.global[`${section}.${key}`] = value; },
      },
    });
    return cfg;
  },
};
