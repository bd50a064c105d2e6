import { createAirlockClient, parseStartupLink, type AirlockClient, type RunStream } from '@airlock/client';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { useBrowserSuite } from './support/browser-suite';
import { ChatPage } from './support/chat-page';

const suite = useBrowserSuite({ keepData: true });

const CLIENTS = 30;
/** The server's default: each client connection runs four chats at once. */
const RUNS_PER_CLIENT = 4;
const CALLS_PER_RUN = 5;

describe('the waiting list after a burst of new chats', () => {
  it('lists every waiting call of every new chat, as the server tells the open tab of them', { timeout: 120_000 }, async () => {
    // The answers the server refused the tab (one connection may have so many reads waiting at most).
    let refused = 0;
    suite.context.on('page', (page) => page.on('websocket', (socket) => socket.on('framereceived', (frame) => void (refused += String(frame.payload).split('"TOO_MANY_REQUESTS"').length - 1))));
    const chat = await ChatPage.open(suite.context, suite.airlock.link);
    const clients: AirlockClient[] = [];
    const runs: RunStream[] = [];
    try {
      // 120 chats from 30 client connections together, each run putting five terminal calls up in one turn.
      for (let index = 0; index < CLIENTS * RUNS_PER_CLIENT; index++) {
        const commands = Array.from({ length: CALLS_PER_RUN }, (_, call) => `echo burst-${index}-${call}`);
        suite.airlock.model.enqueue({ toolCalls: commands.map((command) => ({ name: 'terminal', arguments: { command } })) });
      }
      const waitingUp = async (client: AirlockClient, index: number) => {
        const run = client.startRun({ sessionId: `burst-${index}`, message: `burst chat ${index}` });
        runs.push(run);
        let waiting = 0;
        for await (const event of run) if (event.type === 'tool-start' && event.awaitingConfirmation && ++waiting === CALLS_PER_RUN) return;
        throw new Error(`the run of burst-${index} ended before its calls waited`);
      };
      // Each client starts its next chat once the calls of the one before wait: the tab hears of the burst in waves.
      const started: Promise<void>[] = [];
      for (let c = 0; c < CLIENTS; c++) {
        const client = createAirlockClient({ ...parseStartupLink(suite.airlock.link), WebSocket });
        clients.push(client);
        started.push(
          (async () => {
            for (let r = 0; r < RUNS_PER_CLIENT; r++) await waitingUp(client, c * RUNS_PER_CLIENT + r);
          })(),
        );
      }
      await Promise.all(started);
      const total = CLIENTS * RUNS_PER_CLIENT * CALLS_PER_RUN;
      const pending = await Promise.all(Array.from({ length: CLIENTS * RUNS_PER_CLIENT }, (_, index) => clients[0]!.trpc.chat.pending.query({ sessionId: `burst-${index}` })));
      expect(pending.flat()).toHaveLength(total);

      // Well within the 30 s after which a chat's waiting list is read anyway: what the tab lists, it was told of.
      // The chat list shows its first 100 chats; Waiting for you lists the calls of every chat with a run going.
      const waiting = chat.page.getByRole('region', { name: 'Waiting for you' });
      const chats = chat.page.getByRole('navigation', { name: 'Chats' });
      await vi.waitFor(
        async () => {
          expect(await chats.locator('.session-button', { hasText: 'burst chat' }).count()).toBe(100);
          expect(await waiting.getByRole('heading').textContent()).toContain(`Waiting for you (${total})`);
        },
        { timeout: 15_000, interval: 250 },
      );
      expect(await waiting.getByRole('listitem').count()).toBe(total);
      await chats.getByRole('button', { name: 'Show more chats' }).click();
      await vi.waitFor(async () => expect(await chats.locator('.session-button', { hasText: 'burst chat' }).count()).toBe(CLIENTS * RUNS_PER_CLIENT), { timeout: 15_000, interval: 250 });
      expect(await chats.getByRole('button', { name: 'Show more chats' }).count()).toBe(0);
      // Told of hundreds of changes, the tab asked a few reads of each list, not one per change and chat: none was refused.
      expect(refused).toBe(0);
    } finally {
      await Promise.all(runs.map((run) => run.cancel().catch(() => false)));
      await Promise.all(clients.map((client) => client.close()));
    }
  });
});
