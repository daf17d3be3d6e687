// The next-edit rendering model, free of the VS Code API: which predicted edits are shown where,
// which one Tab jumps to (in this file or another), what accepting one changes, and the checks
// before an edit is applied. extension.ts renders it as decorations.
//
// A `mercury/nextEdit` answer has the open documents' edits; with `updatePending` one
// `mercury/nextEditUpdate` follows from the background with the edits of workspace files that
// are not open (`documentVersion` null: checked against the file's text when applied). The
// update is merged only into the model of the request it answers (same document, same version).

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

/** One edit of `mercury/nextEdit` (mercury_lsp/schema.py PredictedEdit). */
export interface PredictedEdit {
  uri: string;
  range: Range;
  newText: string;
  oldText?: string;
  confidence: number;
  reason: string;
  kind?: string;
  source?: string;
  documentVersion?: number | null;
}

export interface NextEditResult { edits: PredictedEdit[]; positionEncoding?: string; updatePending?: boolean }

/** `mercury/nextEditUpdate` (mercury_lsp/schema.py NextEditUpdate). */
export interface NextEditUpdate {
  textDocument: { uri: string; version?: number | null };
  update: number;
  result: NextEditResult;
}

export const NEXT_EDIT_UPDATE_NOTIFICATION = 'mercury/nextEditUpdate';
/** The `update` number of the workspace files' part (the answer itself is part 1). */
export const CROSS_FILE_UPDATE = 2;

/** What a decoration shows at one location. */
export interface Mark {
  range: Range;
  /** The old text struck through ('' for a pure insertion). */
  oldText: string;
  /** The new text shown after it. */
  newText: string;
  /** Hover: why this location, and how confident the model is. */
  hover: string;
  current: boolean;
}

export type TabAction =
  | { kind: 'none' }
  | { kind: 'jump'; uri: string; position: Position }
  | { kind: 'accept'; edit: PredictedEdit };

/** A document as the checks see it: its version (null: not open) and its text in a range. */
export interface DocumentView { version: number | null; text(range: Range): string }

export function comparePositions(a: Position, b: Position): number {
  return a.line - b.line || a.character - b.character;
}

export function contains(r: Range, p: Position): boolean {
  return comparePositions(r.start, p) <= 0 && comparePositions(p, r.end) <= 0;
}

/** Where the text `edit` inserts ends once it is applied. */
export function insertedEnd(edit: PredictedEdit): Position {
  const lines = edit.newText.split('\n');
  const last = lines[lines.length - 1].length;
  return lines.length === 1
    ? { line: edit.range.start.line, character: edit.range.start.character + last }
    : { line: edit.range.start.line + lines.length - 1, character: last };
}

/**
 * Why `edit` cannot be applied to `doc` as is (undefined: it can). An edit of an open document
 * needs the version it was computed for; an edit of a file on disk (`documentVersion` null) needs
 * the text it replaces to be unchanged, as the server's `WorkspaceEdit`s mean it.
 */
export function checkEdit(edit: PredictedEdit, doc: DocumentView | undefined): string | undefined {
  if (!doc) return `${edit.uri} cannot be read`;
  if (edit.documentVersion != null && doc.version !== edit.documentVersion) {
    return `${edit.uri} is at version ${doc.version}, the edit was computed for version ${edit.documentVersion}`;
  }
  if (edit.oldText !== undefined && doc.text(edit.range) !== edit.oldText) {
    return `${edit.uri} changed at line ${edit.range.start.line + 1} since the edit was predicted`;
  }
  return undefined;
}

/**
 * Pending predicted edits of one request, across files: the requested document first, then the
 * other files in the order they arrived. Tab jumps to the next pending location after the cursor,
 * in this file, then in the next file (wrapping), and accepts the edit when the cursor is already
 * on it; accepting one makes the rest of its file refer to a new version, so they are shifted by
 * `accepted` (same line: by the length difference; later lines: by the line difference).
 */
export class NextEditModel {
  private pending: PredictedEdit[] = [];
  private readonly files: string[];
  /** The version the request was made for (the update must name it). */
  readonly requestVersion: number | null;
  private updatePending: boolean;

  constructor(readonly uri: string, public version: number | null, result: NextEditResult) {
    this.requestVersion = version;
    this.updatePending = result.updatePending === true;
    this.files = [uri];
    this.add(result.edits);
  }

  get size(): number { return this.pending.length; }
  get edits(): readonly PredictedEdit[] { return this.pending; }
  /** True until this request's `mercury/nextEditUpdate` was merged. */
  get awaitingUpdate(): boolean { return this.updatePending; }

  /** The pending edits of `uri`, in document order. */
  editsOf(uri: string): PredictedEdit[] {
    return this.pending.filter((e) => e.uri === uri);
  }

  /** The files with pending edits, in jump order. */
  get uris(): string[] {
    return this.files.filter((u) => this.pending.some((e) => e.uri === u));
  }

  private add(edits: readonly PredictedEdit[]): void {
    for (const e of edits) if (!this.files.includes(e.uri)) this.files.push(e.uri);
    const order = (e: PredictedEdit) => this.files.indexOf(e.uri);
    this.pending = [...this.pending, ...edits]
      .sort((a, b) => order(a) - order(b) || comparePositions(a.range.start, b.range.start));
  }

  /**
   * Merge a `mercury/nextEditUpdate` if it is this request's (its document and version, part 2,
   * once); a stale one (another document, an older request) is dropped. Returns whether it was
   * merged. Its edits are of files that are not open; edits of this document are ignored.
   */
  merge(update: NextEditUpdate): boolean {
    const doc = update.textDocument;
    if (!this.updatePending || update.update !== CROSS_FILE_UPDATE || doc.uri !== this.uri
        || (doc.version ?? null) !== this.requestVersion) {
      return false;
    }
    this.updatePending = false;
    this.add((update.result?.edits ?? []).filter((e) => e.uri !== this.uri));
    return true;
  }

  /** The edit Tab acts on from `cursor` in `uri`: the one under it, else the next one after it in
   * this file, else the first one of the next file with edits (wrapping). */
  target(uri: string, cursor: Position): PredictedEdit | undefined {
    const here = this.editsOf(uri);
    const under = here.find((e) => contains(e.range, cursor));
    if (under) return under;
    const after = here.find((e) => comparePositions(e.range.start, cursor) > 0);
    if (after) return after;
    const files = this.uris;
    const i = files.indexOf(uri);
    const next = files[(i + 1) % files.length]; // i === -1: the first file
    return next === undefined ? undefined : this.editsOf(next)[0];
  }

  /** The decorations of `uri`; the one Tab acts on from `cursor` is current. */
  marks(uri: string, cursor: Position): Mark[] {
    const current = this.target(uri, cursor);
    return this.editsOf(uri).map((e) => ({
      range: e.range,
      oldText: e.oldText ?? '',
      newText: e.newText,
      hover: `mercury next edit: ${e.reason} (confidence ${(e.confidence * 100).toFixed(0)}%)`,
      current: e === current,
    }));
  }

  tab(uri: string, cursor: Position): TabAction {
    const t = this.target(uri, cursor);
    if (!t) return { kind: 'none' };
    if (t.uri === uri && contains(t.range, cursor)) return { kind: 'accept', edit: t };
    return { kind: 'jump', uri: t.uri, position: t.range.start };
  }

  /** Drop the edits of `uri` that `doc` refutes (checkEdit); returns the reasons. */
  validate(uri: string, doc: DocumentView | undefined): string[] {
    const problems: string[] = [];
    this.pending = this.pending.filter((e) => {
      if (e.uri !== uri) return true;
      const why = checkEdit(e, doc);
      if (why) problems.push(why);
      return !why;
    });
    return problems;
  }

  /** `uri` changed under the predictions (not by accepting one): its edits are dropped. */
  drop(uri: string): void {
    this.pending = this.pending.filter((e) => e.uri !== uri);
  }

  /** The edit was applied (its document is now at `newVersion`): drop it, shift the others of its file. */
  accepted(edit: PredictedEdit, newVersion: number | null): void {
    this.pending = this.pending.filter((e) => e !== edit);
    const lines = edit.newText.split('\n');
    const lineDelta = lines.length - 1 - (edit.range.end.line - edit.range.start.line);
    const lastLen = lines[lines.length - 1].length;
    const endChar = lines.length === 1 ? edit.range.start.character + lastLen : lastLen;
    const shift = (p: Position): Position => {
      if (p.line === edit.range.end.line && p.character >= edit.range.end.character) {
        return { line: p.line + lineDelta, character: endChar + (p.character - edit.range.end.character) };
      }
      if (p.line > edit.range.end.line) return { line: p.line + lineDelta, character: p.character };
      return p;
    };
    this.pending = this.pending.map((e) => (e.uri !== edit.uri ? e : {
      ...e, range: { start: shift(e.range.start), end: shift(e.range.end) }, documentVersion: newVersion,
    }));
    if (edit.uri === this.uri) this.version = newVersion;
  }

  /** Apply edits of one file to its `text` (for previews and tests; UTF-16 columns). */
  static apply(text: string, edits: readonly PredictedEdit[]): string {
    const starts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
    const off = (p: Position) => starts[p.line] + p.character;
    const sorted = [...edits].sort((a, b) => comparePositions(b.range.start, a.range.start));
    let out = text;
    for (const e of sorted) out = out.slice(0, off(e.range.start)) + e.newText + out.slice(off(e.range.end));
    return out;
  }

  /** A document view of plain `text` (UTF-16 columns) at `version`. */
  static view(text: string, version: number | null): DocumentView {
    const starts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
    const off = (p: Position) => (p.line < starts.length ? starts[p.line] + p.character : text.length);
    return { version, text: (r) => text.slice(off(r.start), off(r.end)) };
  }
}
