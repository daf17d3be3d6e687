// What the next-edit keys do, free of the VS Code API: the request's answer becomes the model, the
// request's `mercury/nextEditUpdate` is merged into it (also when it arrives before the answer is
// handled; a stale one is dropped), Tab jumps (opening another file) or accepts (one edit, after
// the checks), and a document changed by the user drops its edits. extension.ts supplies the
// editor (`EditorHost`) and renders the model as decorations whenever `changed` is called.
import {
  checkEdit, DocumentView, insertedEnd, NextEditModel, NextEditResult, NextEditUpdate, Position, Range,
} from './nextEditModel';

/** The editor as the controller uses it (extension.ts: the VS Code API; tests: in-memory files). */
export interface EditorHost {
  /** The document of `uri`, opened (not shown) if needed: its version and text. */
  open(uri: string): Promise<DocumentView>;
  /** Show `uri` with the cursor at `position`. */
  reveal(uri: string, position: Position): Promise<void>;
  /** Replace `range` of `uri` with `text` (a WorkspaceEdit); its version after, undefined if refused. */
  replace(uri: string, range: Range, text: string): Promise<number | undefined>;
  log(message: string): void;
}

export class NextEditController {
  model: NextEditModel | undefined;
  /** Updates that arrived before their request's answer was handled (uri@version). */
  private early = new Map<string, NextEditUpdate>();
  private applying = false;

  constructor(private readonly host: EditorHost, private readonly changed: () => void) {}

  /** A request is about to be sent: what is shown goes, and so do early updates of older ones. */
  begin(): void {
    this.model = undefined;
    this.early.clear();
    this.changed();
  }

  /** The answer to a request for `uri` at `version`; returns the model (empty: nothing predicted,
   * unless `awaitingUpdate`). */
  answered(uri: string, version: number, result: NextEditResult): NextEditModel {
    const model = new NextEditModel(uri, version, result);
    const early = this.early.get(`${uri}@${version}`);
    this.early.clear();
    if (early) model.merge(early);
    this.model = model.size > 0 || model.awaitingUpdate ? model : undefined;
    this.changed();
    return model;
  }

  /** `mercury/nextEditUpdate`: merged if it answers the shown request; returns whether it was. */
  update(update: NextEditUpdate): boolean {
    const model = this.model;
    if (!model) {
      this.early.set(`${update.textDocument.uri}@${update.textDocument.version ?? null}`, update);
      return false;
    }
    if (!model.merge(update)) {
      this.host.log(`dropped a stale next-edit update for ${update.textDocument.uri}`);
      return false;
    }
    this.changed();
    return true;
  }

  /** A document changed, not by accepting an edit: its edits were predicted for the text before. */
  documentChanged(uri: string): void {
    const model = this.model;
    if (this.applying || !model) return;
    if (uri === model.uri) {
      this.clear();
    } else if (model.editsOf(uri).length > 0) {
      model.drop(uri);
      if (model.size === 0 && !model.awaitingUpdate) this.model = undefined;
      this.changed();
    }
  }

  /** Tab in `uri` (at `version`) with the cursor at `cursor`: jump to the next edit, or accept it. */
  async tab(uri: string, version: number, cursor: Position): Promise<void> {
    const model = this.model;
    if (!model) return;
    if (uri === model.uri && version !== model.version) {
      this.clear(); // the requested document moved on
      return;
    }
    const action = model.tab(uri, cursor);
    if (action.kind === 'jump') {
      let position = action.position;
      if (action.uri !== uri) { // another file: checked first (a file on disk may have changed)
        const doc = await this.host.open(action.uri);
        for (const why of model.validate(action.uri, doc)) this.host.log(`next edit dropped: ${why}`);
        const first = model.editsOf(action.uri)[0];
        if (!first) {
          this.changed();
          return;
        }
        position = first.range.start;
      }
      await this.host.reveal(action.uri, position);
    } else if (action.kind === 'accept') {
      const edit = action.edit;
      const doc = await this.host.open(edit.uri);
      const why = checkEdit(edit, doc);
      if (why) {
        this.host.log(`next edit dropped: ${why}`);
        model.validate(edit.uri, doc);
      } else {
        this.applying = true;
        let after: number | undefined;
        try {
          after = await this.host.replace(edit.uri, edit.range, edit.newText);
        } finally {
          this.applying = false;
        }
        if (after === undefined) return;
        model.accepted(edit, after);
        await this.host.reveal(edit.uri, insertedEnd(edit));
      }
      if (model.size === 0 && this.model === model) this.model = undefined;
    }
    this.changed();
  }

  clear(): void {
    this.model = undefined;
    this.changed();
  }
}
