import { createContext } from 'react';

/** The chat whose cards are shown; null where a card is shown outside a chat, which then offers no lasting rules. */
export const CurrentSessionContext = createContext<string | null>(null);

/**
 * Moves the focus to the chat's message box, first typing there `typed` (letters a card took as its keys before the
 * typing that followed showed they were a message): a card passes on typing that decides nothing. Null outside a chat.
 */
export const FocusComposerContext = createContext<((typed: string) => void) | null>(null);
