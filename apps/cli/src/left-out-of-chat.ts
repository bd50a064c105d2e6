/** A part of a chat as `sessions.get` answers it: the records it left out as damaged, and how many messages come before it. */
export interface ChatPart {
  leftOut?: string[];
  messagesBefore: number;
}

/**
 * The records every part of a chat left out as damaged, oldest first: those of `newest` (the part the chat was opened
 * with) and of each part before it, read with `read(before)` back to the chat's first message. The model reads the
 * whole chat, so a record left out of an earlier part is one it does not read either.
 */
export async function leftOutOfChat(newest: ChatPart, read: (before: number) => Promise<ChatPart>): Promise<string[]> {
  const parts = [newest.leftOut ?? []];
  for (let before = newest.messagesBefore; before > 0; ) {
    const part = await read(before);
    parts.unshift(part.leftOut ?? []);
    // A part always holds a message; one that would not move back would be read again and again.
    if (!(part.messagesBefore < before)) break;
    before = part.messagesBefore;
  }
  return parts.flat();
}
