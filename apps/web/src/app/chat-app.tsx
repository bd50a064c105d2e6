import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { proseText } from '../chat/prose-text';
import { ChatView } from '../chat/chat-view';
import { useConfirmToolCalls } from '../chat/use-confirm-tool-calls';
import { useTabDrafts, WaitingDraftsContext } from '../chat/waiting-drafts';
import { ConnectionIndicator } from '../connection/connection-indicator';
import type { ConnectionState } from '../connection/connection-status';
import type { SessionSummary } from '../lib/api-types';
import { CoalescedReads } from '../lib/coalesced-reads';
import { randomId } from '../lib/random-id';
import { trpc } from '../lib/trpc';
import { RulesPage } from '../rules/rules-page';
import { SessionList } from '../sessions/session-list';
import { useSidebarChats } from '../sessions/use-session-pages';
import { useNotificationChoice, type NotificationChoice } from '../settings/notification-choice';
import { SettingsDialog } from '../settings/settings-dialog';
import { useToolSettings, type SettingsStore } from '../settings/settings-store';
import { toRunOptions } from '../settings/tool-settings';
import { useAttentionSignals } from '../waiting/use-attention-signals';
import { useDecideWaiting } from '../waiting/use-decide-waiting';
import { useDecisionNotifications } from '../waiting/use-decision-notifications';
import { useRunningChats } from '../waiting/use-running-chats';
import { useWaitingApprovals, WAITING_FALLBACK_MS } from '../waiting/use-waiting-approvals';
import { useWaitingNavigation } from '../waiting/use-waiting-navigation';
import { WaitingList } from '../waiting/waiting-list';
import { ModelBadge } from './model-badge';
import { WorkspaceNote } from './workspace-note';
import { HeaderNotice } from './header-notice';

const CURRENT_SESSION_KEY = 'airlock.session';

interface CurrentSession {
  id: string;
  /** Not on the server until its first message. */
  isNew: boolean;
}

function initialSession(): CurrentSession {
  const saved = window.sessionStorage.getItem(CURRENT_SESSION_KEY);
  return saved ? { id: saved, isNew: false } : { id: randomId('chat'), isNew: true };
}

export interface ChatAppProps {
  connection: ConnectionState;
  settingsStore: SettingsStore;
  /** This browser's own choice of notifications. */
  notificationChoice: NotificationChoice;
}

export function ChatApp({ connection, settingsStore, notificationChoice }: ChatAppProps) {
  const utils = trpc.useUtils();
  // Read again anyway after the waiting lists' fallback: a chat started on another instance that none here follows is
  // told to this server only when something else changes, and a read the server refused is not asked again by itself.
  // Read a page at a time: "Show more chats" reads the next. A change told below reads the pages shown again, from the
  // first, so a chat that changed comes to the top whether it was shown or not.
  // A search typed in the sidebar is the server's, among every chat: the pages read are only the newest.
  const { all: sessions, listed, search, setSearch } = useSidebarChats(WAITING_FALLBACK_MS);
  // The chats with a run going, on whichever page: their waiting calls are listed even when their chat is not shown.
  const running = useRunningChats(WAITING_FALLBACK_MS);
  // The list and the open chat follow the server's changes instead of polling. "ready" comes first and again after
  // every reconnect, when changes may have been missed: everything is read again then. A burst of changes (many chats
  // started at once) makes a few reads of each list, not one per change: see CoalescedReads.
  const [reads] = useState(() => new CoalescedReads());
  const restartWatch = useRef<() => void>(() => undefined);
  const watch = trpc.sessions.watch.useSubscription(undefined, {
    // The server ends every watch when it shuts down: the restarted server is watched again (and says "ready").
    onComplete: () => restartWatch.current(),
    onData: (change) => {
      const readPending = (sessionId: string) => reads.request(`pending:${sessionId}`, () => utils.chat.pending.invalidate({ sessionId }));
      if (change.type === 'waiting-changed') {
        readPending(change.sessionId);
        return;
      }
      reads.request('sessions', () => utils.sessions.list.invalidate());
      // Rules may have decided calls in a run this tab does not follow (their hits are read again as it ends), and a
      // deleted chat takes its own rules with it.
      reads.request('rules', () => utils.rules.list.invalidate());
      if (change.type === 'ready') {
        reads.request('pending', () => utils.chat.pending.invalidate());
        reads.request('chats', () => utils.sessions.get.invalidate());
        return;
      }
      const sessionId = change.type === 'session-changed' ? change.session.sessionId : change.sessionId;
      // Its waiting calls are told by waiting-changed, so a list followed now is not read again: a title, a setting or
      // a run's start or end changes none of them. Marked stale only, so a list taken up again later (the chat's next
      // run) is read then, not shown as it was.
      void utils.chat.pending.invalidate({ sessionId }, { refetchType: 'none' });
      reads.request(`chat:${sessionId}`, () => utils.sessions.get.invalidate({ sessionId }));
    },
  });
  restartWatch.current = watch.reset;
  const tools = trpc.tools.list.useQuery(undefined, { staleTime: 30_000, refetchInterval: 30_000 });
  const model = trpc.model.info.useQuery(undefined, { staleTime: 60_000 });
  const deleteSession = trpc.sessions.delete.useMutation({ onSettled: () => utils.sessions.list.invalidate() });
  const { settings, error: settingsError } = useToolSettings(settingsStore);
  // The server's old setting is read only as the default of a browser that has not chosen yet.
  const notifications = useNotificationChoice(notificationChoice, settings?.notifyDecisions);
  const [current, setCurrent] = useState(initialSession);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const [rulesOpen, setRulesOpen] = useState(false);

  // Kept per tab, so a reload returns to the same chat (and re-attaches to its run).
  useEffect(() => window.sessionStorage.setItem(CURRENT_SESSION_KEY, current.id), [current.id]);
  const select = useCallback((next: CurrentSession) => {
    setCurrent(next);
    setRulesOpen(false);
    // Its "Confirm tool calls" is the open chat's: left open over another chat, it would read and change that one's.
    setSettingsOpen(false);
  }, []);

  const list = sessions.sessions ?? [];
  // A chat older than the pages shown (opened again after a reload) is known by its own read, the chat view's: without
  // it the tab would take it for a new chat, named "New chat", its setting not the server's.
  const detail = trpc.sessions.get.useQuery({ sessionId: current.id }, { enabled: !current.isNew, retry: false });
  const summary = list.find((session) => session.sessionId === current.id) ?? running?.find((session) => session.sessionId === current.id) ?? detail.data;
  // A chat on the server not read yet: neither its title nor its setting is known, and "New chat" or the default
  // setting would be wrong for a moment.
  const reading = !current.isNew && summary === undefined && detail.isPending;
  // Its setting is not known either when that read failed (the connection went under it): only a chat the server does
  // not have takes a new chat's. Shown on meanwhile, a chat with confirmation off would claim to ask, and a change made
  // then would be kept as a new chat's.
  const settingUnknown = !current.isNew && summary === undefined && detail.error?.data?.code !== 'NOT_FOUND';
  // Nor is it a new chat: the chat says why it is not shown, and the header does not name it "New chat".
  const unread = settingUnknown && detail.isError;
  const confirm = useConfirmToolCalls(current.id, summary, settingUnknown);
  const waiting = useWaitingApprovals(running);
  // Calls a deny rule added after they were put up asked about: their tool-start, sent before, does not say so.
  const askedLater = useMemo(
    () => new Map(waiting.all.filter((approval) => approval.sessionId === current.id && approval.exactGrantsOnly === true).map((approval) => [approval.approvalId, approval.askedBecause])),
    [waiting.all, current.id],
  );
  const drafts = useTabDrafts(waiting);
  useAttentionSignals(waiting.all.length);
  const waitingDecision = useDecideWaiting();
  const openChat = useCallback((sessionId: string) => select({ id: sessionId, isNew: false }), [select]);
  const goToWaiting = useWaitingNavigation(waiting, openChat);
  useDecisionNotifications({ enabled: notifications.enabled === true, waiting: waiting.all, connected: connection === 'connected', decide: waitingDecision.decide, show: goToWaiting });

  const toolMap = useMemo(() => new Map((tools.data?.tools ?? []).map((tool) => [tool.name, tool])), [tools.data]);
  const latest = useRef({ settings, knownTools: tools.data?.tools, confirmFirst: confirm.forFirstMessage });
  latest.current = { settings, knownTools: tools.data?.tools, confirmFirst: confirm.forFirstMessage };
  // A chat on the server runs with its own setting: sending it again could undo another tab's change.
  const runOptions = useCallback(() => {
    const { settings: chosen, knownTools, confirmFirst } = latest.current;
    return { ...toRunOptions(chosen, knownTools), ...(confirmFirst === undefined ? {} : { confirmToolCalls: confirmFirst }) };
  }, []);
  const onActivity = useCallback(() => void utils.sessions.list.invalidate(), [utils]);

  const remove = (session: SessionSummary) => {
    if (!window.confirm(`Delete the chat “${proseText(session.title)}”? Its running reply is stopped and its “Always allow” grants are removed.`)) return;
    deleteSession.mutate({ sessionId: session.sessionId });
    if (session.sessionId === current.id) select({ id: randomId('chat'), isNew: true });
  };

  return (
    <div className="app">
      {/* Behind the open Settings dialog the page takes neither the focus nor a click: Tab out of the dialog reached
          the Allow buttons it covers. */}
      <aside className="sidebar" inert={settingsOpen}>
        <div className="brand">
          <span className="logo" aria-hidden="true" />
          Airlock
        </div>
        <button type="button" className="btn btn-primary new-chat" onClick={() => select({ id: randomId('chat'), isNew: true })}>
          New chat
        </button>
        <WaitingList
          approvals={waiting.all}
          sending={waitingDecision.sending}
          onDecide={(approval, decision) => void waitingDecision.decide({ sessionId: approval.sessionId, approvalId: approval.approvalId, decision })}
          onOpen={goToWaiting}
        />
        <SessionList
          waiting={waiting.countBySession}
          sessions={listed.sessions ?? []}
          currentId={current.id}
          draft={current.isNew}
          onSelect={(sessionId) => select({ id: sessionId, isNew: false })}
          onDelete={remove}
          hasMore={listed.hasMore}
          loadingMore={listed.loadingMore}
          onShowMore={listed.showMore}
          query={search}
          onQueryChange={setSearch}
          searching={listed.pending}
          searchable={list.length > 0 || search !== ''}
        />
        <WorkspaceNote workspace={model.data?.workspace} />
        <button type="button" className="btn settings-button" aria-pressed={rulesOpen} onClick={() => setRulesOpen(!rulesOpen)}>
          Rules
        </button>
        <button type="button" className="btn settings-button" onClick={() => setSettingsOpen(true)}>
          Settings
        </button>
      </aside>
      <main className="main" inert={settingsOpen}>
        <header className="topbar">
          {reading ? (
            <h1 className="chat-title chat-title-reading" aria-busy="true">
              Loading chat…
            </h1>
          ) : unread ? (
            <h1 className="chat-title chat-title-reading">Chat not loaded</h1>
          ) : (
            <h1 className="chat-title">{summary === undefined ? 'New chat' : proseText(summary.title)}</h1>
          )}
          <ModelBadge info={model.data} />
          <HeaderNotice label="Model not confirmed by its server" warning={model.data?.modelWarning} />
          <HeaderNotice label="Tools run without a sandbox" warning={model.data?.sandbox?.kind === 'none' ? model.data.sandbox.reason : undefined} />
          <HeaderNotice label="The workspace holds your home folder" warning={model.data?.workspaceWarning} />
          <ConnectionIndicator state={connection} />
        </header>
        {rulesOpen && <RulesPage onClose={() => setRulesOpen(false)} />}
        {/* Hidden, not unmounted: a run being followed keeps its stream while the Rules page shows. */}
        <div className="chat-holder" hidden={rulesOpen}>
          <WaitingDraftsContext value={drafts}>
            <ChatView
              key={current.id}
              sessionId={current.id}
              isNew={current.isNew}
              tools={toolMap}
              runOptions={runOptions}
              connected={connection === 'connected'}
              onActivity={onActivity}
              // Not known yet: no "confirmation is off" banner until the chat's setting says so.
              confirmToolCalls={confirm.value ?? true}
              onConfirmToolCalls={confirm.set}
              askedLater={askedLater}
            />
          </WaitingDraftsContext>
        </div>
      </main>
      {settingsOpen && (
        <SettingsDialog
          settings={settings}
          settingsError={settingsError}
          tools={tools.data}
          onChange={(patch) => settingsStore.update(patch)}
          confirmToolCalls={confirm}
          sessionId={current.id}
          notifications={notifications}
          onNotificationsChange={(enabled) => notificationChoice.set(enabled)}
          onClose={() => setSettingsOpen(false)}
        />
      )}
    </div>
  );
}
