import { describe, expect, it } from 'vitest';
import { continuedChatNote } from './continued-chat';

describe('continuedChatNote', () => {
  it('names the chat continued by its title', () => {
    expect(continuedChatNote({ sessionId: 'chat_1', title: 'deploy the site' }, 'chat_1')).toBe('Continuing the chat “deploy the site” (its earlier messages are not shown here).');
  });

  it('says a chat the server does not have is started under the id', () => {
    expect(continuedChatNote(null, 'chat_typo')).toBe('No chat chat_typo on this server: your first message starts a new chat under this id.');
  });
});
