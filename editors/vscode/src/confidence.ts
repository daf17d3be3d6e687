// "Accept the confident part": every inline item of mercury-lsp carries the `mercury.accepted`
// command (run after it is inserted, counted by the server); its argument's `confidentText` is the
// item cut before the model's first low-confidence token, when the item has one.
export const ACCEPTED_COMMAND = 'mercury.accepted';

export interface ItemLike { command?: { command: string; arguments?: unknown[] } | undefined }

/** The confident part of an inline item (same range as the item), if the server marked one. */
export function confidentText(item: ItemLike | undefined): string | undefined {
  if (!item?.command || item.command.command !== ACCEPTED_COMMAND) return undefined;
  const arg = item.command.arguments?.[0] as { confidentText?: unknown } | undefined;
  return typeof arg?.confidentText === 'string' ? arg.confidentText : undefined;
}

/**
 * Accepting the confident part in a document's text: the item's range (`start`..`end`, offsets)
 * becomes `confident`, and the cursor (offset `cursor`, inside the range) ends up before the text
 * that followed it in the range (the rest of the line, which the item keeps at its end).
 */
export function acceptConfidentText(text: string, start: number, end: number, cursor: number, confident: string):
  { text: string; cursor: number } {
  const rest = end - Math.min(Math.max(cursor, start), end);
  return { text: text.slice(0, start) + confident + text.slice(end),
    cursor: start + Math.max(0, confident.length - rest) };
}
