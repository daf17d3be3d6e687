// The next-edit rendering model, free of the VS Code API: which predicted edits are shown where,
// which one Tab jumps to, and what accepting it changes. extension.ts renders it as decorations.

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

export interface NextEditResult { edits: PredictedEdit[]; positionEncoding?: string }

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
  | { kind: 'jump'; position: Position }
  | { kind: 'accept'; edit: PredictedEdit };

export function comparePositions(a: Position, b: Position): number {
  return a.line - b.line || a.character - b.character;
}

export function contains(r: Range, p: Position): boolean {
  return comparePositions(r.start, p) <= 0 && comparePositions(p, r.end) <= 0;
}

/**
 * Pending predicted edits of one document version. Tab jumps to the next pending location after
 * the cursor (wrapping), and accepts the edit when the cursor is already on it; accepting one
 * makes the rest refer to a new version, so they are shifted by `accepted` (same line: by the
 * length difference; later lines: by the line difference).
 */
export class NextEditModel {
  private pending: PredictedEdit[];

  constructor(readonly uri: string, public version: number | null, result: NextEditResult) {
    this.pending = result.edits
      .filter((e) => e.uri === uri)
      .sort((a, b) => comparePositions(a.range.start, b.range.start));
  }

  get size(): number { return this.pending.length; }
  get edits(): readonly PredictedEdit[] { return this.pending; }

  /** The edit Tab acts on from `cursor`: the one under it, else the next one after it (wrapping). */
  target(cursor: Position): PredictedEdit | undefined {
    const under = this.pending.find((e) => contains(e.range, cursor));
    if (under) return under;
    return this.pending.find((e) => comparePositions(e.range.start, cursor) > 0) ?? this.pending[0];
  }

  marks(cursor: Position): Mark[] {
    const current = this.target(cursor);
    return this.pending.map((e) => ({
      range: e.range,
      oldText: e.oldText ?? '',
      newText: e.newText,
      hover: `mercury next edit: ${e.reason} (confidence ${(e.confidence * 100).toFixed(0)}%)`,
      current: e === current,
    }));
  }

  tab(cursor: Position): TabAction {
    const t = this.target(cursor);
    if (!t) return { kind: 'none' };
    if (contains(t.range, cursor)) return { kind: 'accept', edit: t };
    return { kind: 'jump', position: t.range.start };
  }

  /** The edit was applied (the document is now at `newVersion`): drop it, shift the others. */
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
    this.pending = this.pending.map((e) => ({
      ...e, range: { start: shift(e.range.start), end: shift(e.range.end) }, documentVersion: newVersion,
    }));
    this.version = newVersion;
  }

  /** Apply every pending edit to `text` (for previews and tests; UTF-16 columns). */
  static apply(text: string, edits: readonly PredictedEdit[]): string {
    const starts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
    const off = (p: Position) => starts[p.line] + p.character;
    const sorted = [...edits].sort((a, b) => comparePositions(b.range.start, a.range.start));
    let out = text;
    for (const e of sorted) out = out.slice(0, off(e.range.start)) + e.newText + out.slice(off(e.range.end));
    return out;
  }
}
