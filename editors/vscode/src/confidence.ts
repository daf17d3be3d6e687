// "Accept the confident part": the server adds a second inline item holding the suggestion up to
// its first low-confidence token, marked by this command (run by the client when it is accepted).
export const CONFIDENT_COMMAND = 'mercury.acceptedConfident';

export interface ItemLike { command?: { command: string } | undefined }

/** The confident-part item among the inline items, if the server sent one. */
export function confidentItem<T extends ItemLike>(items: readonly T[]): T | undefined {
  return items.find((item) => item.command?.command === CONFIDENT_COMMAND);
}
