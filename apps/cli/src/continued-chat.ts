/**
 * What `--session` opened, said before anything else of the chat: the chat's title when the server has it, or that it
 * has none under that id, so a mistyped id, or one from another server, does not read as a chat continued.
 */
export function continuedChatNote(chat: { sessionId: string; title: string } | null, sessionId: string): string {
  if (chat === null) return `No chat ${sessionId} on this server: your first message starts a new chat under this id.`;
  return `Continuing the chat “${chat.title}” (its earlier messages are not shown here).`;
}
