import { createContext } from 'react';

/** The chat whose cards are shown; null where a card is shown outside a chat, which then offers no lasting rules. */
export const CurrentSessionContext = createContext<string | null>(null);
