import { appRouter, ChatService, ConnectionState, createCallerFactory, MemoryStore, type AppRouter } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel } from '@airlock/core/testing';
import { TRPCClientError, type TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { testTrpc } from '../lib/test-trpc';
import { trpc } from '../lib/trpc';
import { SessionList } from './session-list';
import { SIDEBAR_PAGE, useSessionPages, useSidebarChats } from './use-session-pages';

afterEach(cleanup);

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

/** The server's own router over a store of `count` chats (`chat-0` the oldest), answering the page's queries. */
async function serverWith(count: number) {
  const store = new MemoryStore();
  for (let index = 0; index < count; index++) {
    await store.createSession({ sessionId: `chat-${index}`, title: `Chat ${index}`, createdAt: 1_000, updatedAt: 1_000 + index, confirmToolCalls: true, lastRunId: null });
  }
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [], store });
  services.push(chat);
  await chat.open();
  const caller = createCallerFactory(appRouter)({
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('page'),
  });
  const reads: unknown[] = [];
  const link: TRPCLink<AppRouter> = () => ({ op }) =>
    observable((observer) => {
      if (op.path !== 'sessions.list') return () => undefined;
      reads.push(op.input);
      caller.sessions.list(op.input as Parameters<typeof caller.sessions.list>[0]).then(
        (data) => {
          observer.next({ result: { type: 'data', data } });
          observer.complete();
        },
        (error: unknown) => observer.error(TRPCClientError.from(error as Error)),
      );
      return () => undefined;
    });
  return { chat, reads, link };
}

function Sidebar({ onUtils }: { onUtils: (utils: ReturnType<typeof trpc.useUtils>) => void }) {
  const pages = useSessionPages(60_000);
  onUtils(trpc.useUtils());
  return (
    <SessionList
      sessions={pages.sessions ?? []}
      currentId="none"
      draft={false}
      onSelect={() => undefined}
      onDelete={() => undefined}
      hasMore={pages.hasMore}
      loadingMore={pages.loadingMore}
      onShowMore={pages.showMore}
    />
  );
}

/** The sidebar as the app wires it: the pages read, and the server's search while one is typed. */
function SearchableSidebar() {
  const { all, listed, search, setSearch } = useSidebarChats(60_000);
  return (
    <SessionList
      sessions={listed.sessions ?? []}
      currentId="none"
      draft={false}
      onSelect={() => undefined}
      onDelete={() => undefined}
      hasMore={listed.hasMore}
      loadingMore={listed.loadingMore}
      onShowMore={listed.showMore}
      query={search}
      onQueryChange={setSearch}
      searching={listed.pending}
      searchable={(all.sessions?.length ?? 0) > 0 || search !== ''}
    />
  );
}

const titles = () => within(screen.getByRole('navigation', { name: 'Chats' })).queryAllByRole('button', { name: /^Chat / }).map((entry) => entry.querySelector('.session-title')!.textContent);
const newest = (count: number, below: number) => Array.from({ length: count }, (_, index) => `Chat ${below - 1 - index}`);

describe('the chat list in the sidebar', () => {
  it('shows the newest chats, more on demand, and brings a chat changed elsewhere to the top, loaded or not', async () => {
    const server = await serverWith(230);
    let utils: ReturnType<typeof trpc.useUtils> | undefined;
    render(testTrpc(server.link).provide(<Sidebar onUtils={(next) => (utils = next)} />));
    await screen.findByText('Chat 229');
    expect(titles()).toStrictEqual(newest(SIDEBAR_PAGE, 230));
    expect(server.reads).toStrictEqual([{ limit: SIDEBAR_PAGE, direction: 'forward' }]);

    // A chat not shown yet changes (sessions.watch tells the tab, which reads the list again): it comes to the top.
    await server.chat.updateSession('chat-3', { title: 'Chat 3 renamed' });
    await act(() => utils!.sessions.list.invalidate());
    await screen.findByText('Chat 3 renamed');
    expect(titles()).toStrictEqual(['Chat 3 renamed', ...newest(SIDEBAR_PAGE - 1, 230)]);

    fireEvent.click(screen.getByRole('button', { name: 'Show more chats' }));
    await screen.findByText('Chat 31');
    expect(titles()).toStrictEqual(['Chat 3 renamed', ...newest(2 * SIDEBAR_PAGE - 1, 230)]);

    fireEvent.click(screen.getByRole('button', { name: 'Show more chats' }));
    await screen.findByText('Chat 0');
    expect(titles()).toStrictEqual(['Chat 3 renamed', ...newest(230, 230).filter((title) => title !== 'Chat 3')]);
    expect(screen.queryByRole('button', { name: 'Show more chats' })).toBeNull();
  });

  it('searches every chat, read or not, a page at a time, whatever the case', async () => {
    const server = await serverWith(230);
    render(testTrpc(server.link).provide(<SearchableSidebar />));
    await screen.findByText('Chat 229');
    expect(titles()).toStrictEqual(newest(SIDEBAR_PAGE, 230));
    const box = screen.getByRole('searchbox', { name: 'Search chats' });

    // Chat 120 … Chat 129 and Chat 12 are past the first page: the tab has not read them.
    fireEvent.change(box, { target: { value: ' chat 12' } });
    await screen.findByText('Chat 12');
    expect(titles()).toStrictEqual([...newest(10, 130), 'Chat 12']);
    expect(server.reads.at(-1)).toStrictEqual({ limit: SIDEBAR_PAGE, query: 'chat 12', direction: 'forward' });
    expect(screen.queryByRole('button', { name: 'Show more chats' })).toBeNull();

    // Chat 1, Chat 10 … Chat 19 and Chat 100 … Chat 199: a page of them, then the rest.
    fireEvent.change(box, { target: { value: 'CHAT 1' } });
    await screen.findByText('Chat 199');
    const found = ['Chat 199', ...newest(99, 199)];
    await vi.waitFor(() => expect(titles()).toStrictEqual(found));
    fireEvent.click(screen.getByRole('button', { name: 'Show more chats' }));
    await screen.findByText('Chat 1');
    expect(titles()).toStrictEqual([...found, 'Chat 19', 'Chat 18', 'Chat 17', 'Chat 16', 'Chat 15', 'Chat 14', 'Chat 13', 'Chat 12', 'Chat 11', 'Chat 10', 'Chat 1']);

    fireEvent.change(box, { target: { value: 'no such chat' } });
    await screen.findByText('No chat title contains “no such chat”.');
    expect(titles()).toStrictEqual([]);

    fireEvent.change(box, { target: { value: '  ' } });
    await screen.findByText('Chat 229');
    expect(titles()).toStrictEqual(newest(SIDEBAR_PAGE, 230));
  });
});
