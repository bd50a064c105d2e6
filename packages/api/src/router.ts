import { AirlockError, grantsNeedExactArguments, toolJsonSchema } from '@airlock/core';
import { initTRPC, tracked, TRPCError } from '@trpc/server';
import { z, ZodError } from 'zod';
import type { ChatService, SessionChange } from './chat-service';
import { ChangeFanOut } from './change-fan-out';
import type { Context, RuleService } from './context';
import { ruleDraftSchema } from './rules';
import { parseEventId } from './event-log';
import { INTERNAL_ERROR_MESSAGE, toTRPCError } from './error-mapping';
import { damagedRecordIn } from './damaged-record-error';
import { boundedWatch } from './bounded-watch';
import { toolSettingsPatchSchema, type ToolSettings } from './tool-settings';
import type { ToolSettingsService } from './tool-settings-service';
import { DEFAULT_SESSION_PAGE, sessionListInputSchema } from './session-cursor';
import { auditQuerySchema, confirmInputSchema, idSchema, sessionInputSchema, sessionUpdateSchema, streamInputSchema, workspaceTrustSchema } from './schemas';

const t = initTRPC.context<Context>().create({
  // Never send stack traces (with the machine's paths) to a client, whatever NODE_ENV says.
  isDev: false,
  errorFormatter({ shape, error }) {
    const zodError = error.cause instanceof ZodError ? error.cause : undefined;
    // A store wraps a damaged record in an error of its own, which names its file: only the record is said.
    const damaged = damagedRecordIn(error.cause);
    return {
      ...shape,
      message: zodError ? describeIssues(zodError) : (damaged?.clientText ?? (unintended(error) ? INTERNAL_ERROR_MESSAGE : shape.message)),
      data: { ...shape.data, zodError: zodError ? z.flattenError(zodError) : null },
    };
  },
});

/**
 * An internal error that is no AirlockError: one tRPC caught from a procedure or a stream (a driver's, the file
 * system's), whose message can carry paths, SQL or a driver's details. The client gets only INTERNAL_ERROR_MESSAGE;
 * the server logs the detail (its onError).
 */
function unintended(error: TRPCError): boolean {
  return error.code === 'INTERNAL_SERVER_ERROR' && !(error.cause instanceof AirlockError);
}

function describeIssues(error: ZodError): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : 'input'}: ${issue.message}`).join('; ');
}

/**
 * Every procedure maps thrown core errors to tRPC codes here, in one place. A query waits for its turn among its
 * connection's queries (see AnswerQueue): the answers of a batch go out one at a time, as the socket takes them.
 */
const procedure = t.procedure.use(async ({ ctx, type, next }) => {
  let result;
  try {
    result = type === 'query' ? await ctx.connection.answers.answer(() => next()) : await next();
  } catch (error) {
    throw toTRPCError(error);
  }
  if (!result.ok && result.error.cause instanceof AirlockError) throw toTRPCError(result.error.cause);
  return result;
});

/**
 * A procedure whose change every watch is told of (sessions.watch, settings.watch): each spends one of the
 * connection's changes first, and over its budget it is refused with TOO_MANY_REQUESTS and changes nothing.
 */
const changeProcedure = procedure.use(({ ctx, next }) => {
  ctx.connection.spendChange();
  return next();
});

const chatRouter = t.router({
  /**
   * Starts a run for a new message and streams its events; with the runId (or lastEventId) of a run
   * that exists, re-attaches and replays exactly the events after lastEventId. A message given with it must be the
   * run's own, with its options (a retry of its start), else CONFLICT.
   */
  stream: procedure.input(streamInputSchema).subscription(({ input, ctx, signal }) =>
    // Opened at the first read: tRPC may still refuse the subscription once this returns (an id already in use),
    // and then never reads it; a run started here would go on unwatched and its place stay taken.
    new OpenOnRead(async () => {
      let placed = false;
      try {
        // Taken before a run starts: a stream refused for want of a place starts nothing.
        ctx.connection.takeSubscription();
        placed = true;
        const { runId, afterSeq } = await openRun(ctx, input);
        // The run's log follower is the stream itself: nothing in between to hold per stream or to pass each event
        // through. tRPC calls its return() when the subscription stops or the socket closes, which gives the place back.
        return ctx.services.chat.follow(input.sessionId, runId, afterSeq, tracked, signal).bind({ window: ctx.connection.sendWindow, places: ctx.connection });
      } catch (error) {
        if (placed) ctx.connection.releaseSubscription();
        // Mapped here, not by the middleware: the error is delivered when the stream is read, where clients expect it.
        throw toTRPCError(error);
      }
    }),
  ),

  /**
   * Allows or denies one pending call. Idempotent: a repeat answers "already-decided" and never runs anything twice.
   * A resolved allow answers with the decision the loop reported: "deny" when a deny rule refused the call after all.
   */
  confirmTool: procedure.input(confirmInputSchema).mutation(async ({ input, ctx }) => {
    const { clientLabel: given, notAfter, ...decision } = input;
    // The label the decision names, or else the one the client gave for its whole connection.
    const clientLabel = given ?? ctx.connection.clientLabel;
    const by = { connectionId: ctx.connection.connectionId, ...(clientLabel === undefined ? {} : { clientLabel }) };
    const deadline = notAfter === undefined ? undefined : ctx.connection.serverTimeOf(notAfter);
    const result = await ctx.services.chat.confirm({ ...decision, by, ...(deadline === undefined ? {} : { deadline }) });
    if (result.status === 'not-found') return { resolved: false, status: result.status };
    const answer = { resolved: result.resolved, status: result.status, decision: result.decision };
    return result.resolved && result.alwaysNotSaved !== undefined ? { ...answer, alwaysNotSaved: result.alwaysNotSaved } : answer;
  }),

  // `paused`: the stop does not hold for good yet (the run is paused, its store cannot take writes for now, and the stop is
  // applied when it is taken up; or the stop could not be stored), said in full.
  cancel: procedure.input(z.object({ sessionId: idSchema, runId: idSchema.optional() })).mutation(({ input, ctx }) => ctx.services.chat.stop(input.sessionId, input.runId)),

  pending: procedure.input(sessionInputSchema).query(({ input, ctx }) => ctx.services.chat.listWaiting(input.sessionId)),
});

export type SessionWatchEvent = { type: 'ready' } | SessionChange;

/** Changes queued for one watcher at most; past that the queue becomes a single "ready". */
const MAX_QUEUED_CHANGES = 1000;

/**
 * The changes every watch of a kind is told of, in batches paced over the whole server (see ChangeFanOut): one
 * fan-out per chat service and per settings service, shared by every connection's watches.
 */
const sessionFanOuts = new WeakMap<ChatService, ChangeFanOut<SessionChange>>();
const settingsFanOuts = new WeakMap<ToolSettingsService, ChangeFanOut<ToolSettings>>();

function sessionChanges(chat: ChatService): ChangeFanOut<SessionChange> {
  let fanOut = sessionFanOuts.get(chat);
  if (fanOut === undefined) {
    // A chat's newest summary (or its deletion) stands for the changes before it; its waiting list is read again.
    fanOut = new ChangeFanOut((listener) => chat.watchSessions(listener), sessionChangeKey);
    sessionFanOuts.set(chat, fanOut);
  }
  return fanOut;
}

function sessionChangeKey(change: SessionChange): string {
  switch (change.type) {
    case 'session-changed':
      return `session:${change.session.sessionId}`;
    case 'session-deleted':
      return `session:${change.sessionId}`;
    case 'waiting-changed':
      return `waiting:${change.sessionId}`;
  }
}

function settingsChanges(settings: ToolSettingsService): ChangeFanOut<ToolSettings> {
  let fanOut = settingsFanOuts.get(settings);
  if (fanOut === undefined) {
    fanOut = new ChangeFanOut((listener) => settings.watch(listener), () => 'settings');
    settingsFanOuts.set(settings, fanOut);
  }
  return fanOut;
}

/** The session watch: its place is taken at its first read and held until it ends (see boundedWatch). */
function watchSessions(ctx: Context, signal: AbortSignal | undefined): AsyncGenerator<SessionWatchEvent, void, undefined> {
  return boundedWatch(ctx.connection, 'sessions', signal, (wake) => {
    const queue: SessionWatchEvent[] = [{ type: 'ready' }];
    const watching = sessionChanges(ctx.services.chat).watch((changes) => {
      for (const change of changes) {
        // A client too slow to keep up is told to read the whole list again: nothing is lost, memory stays bounded.
        if (queue.length >= MAX_QUEUED_CHANGES) queue.splice(0, queue.length, { type: 'ready' });
        else queue.push(change);
      }
      wake();
    });
    return { take: () => queue.shift(), waiting: () => queue.length > 0, stop: () => watching.stop() };
  });
}

/**
 * The settings after each change made through this server (through any instance, with several on one database),
 * starting with them as they are. Only the newest settings wait for a slow client: its queue holds one item at most.
 */
async function* watchSettings(ctx: Context, signal: AbortSignal | undefined): AsyncGenerator<ToolSettings, void, undefined> {
  const settings = settingsOf(ctx);
  yield* boundedWatch(ctx.connection, 'settings', signal, (wake) => {
    let latest: ToolSettings | undefined;
    // Listening before the first read: a change made while it reads is not missed (it is newer and replaces it).
    const watching = settingsChanges(settings).watch((changed) => {
      latest = changed.at(-1) ?? latest;
      wake();
    });
    return {
      load: async () => {
        const first = await settings.get();
        // A change made while it read, still waiting in a paced batch, is newer than what it read.
        latest ??= watching.takeUntold().at(-1) ?? first.settings;
      },
      take: () => {
        const next = latest;
        latest = undefined;
        return next;
      },
      waiting: () => latest !== undefined,
      stop: () => watching.stop(),
    };
  });
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * A subscription's stream that does its work (takes a place, starts or finds the run) at its first read rather
 * than when the procedure answers. Once open, reads go straight to the opened stream: a waiting read holds nothing
 * of this object's own.
 */
class OpenOnRead<T> implements AsyncIterableIterator<T, undefined, undefined> {
  private inner: AsyncIterator<T, undefined, undefined> | undefined = undefined;
  private opening: Promise<AsyncIterator<T, undefined, undefined>> | undefined = undefined;
  private closed = false;

  constructor(private open: (() => Promise<AsyncIterator<T, undefined, undefined>>) | undefined) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    return this.inner !== undefined ? this.inner.next() : this.openThenRead();
  }

  async return(): Promise<IteratorResult<T, undefined>> {
    this.closed = true;
    this.open = undefined;
    const inner = this.inner ?? (await this.opening?.catch(() => undefined));
    await inner?.return?.();
    return DONE;
  }

  /** What tRPC calls as the subscription ends: as a method, tRPC adds no closure of its own to each stream for it. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  private async openThenRead(): Promise<IteratorResult<T, undefined>> {
    if (this.opening === undefined) {
      const open = this.open;
      this.open = undefined;
      if (open === undefined || this.closed) return DONE;
      this.opening = open();
    }
    const inner = await this.opening;
    this.inner = inner;
    this.opening = undefined;
    // Closed while it opened: what it opened is closed too (the run goes on; its stream and place end).
    if (this.closed) {
      await inner.return?.();
      return DONE;
    }
    return inner.next();
  }
}

/** Finds the run to re-attach to, or starts a new one; answers where its events resume. */
async function openRun(ctx: Context, input: z.infer<typeof streamInputSchema>): Promise<{ runId: string; afterSeq: number }> {
  const { chat } = ctx.services;
  const resumeFrom = parseEventId(input.lastEventId);
  // A lastEventId this server never sent is an error, not "from the start": replaying everything would repeat events.
  if (input.lastEventId !== undefined && input.lastEventId !== '' && resumeFrom === undefined) {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'lastEventId: not an event id of this server (expected "<runId>:<number>")' });
  }
  if (resumeFrom && !idSchema.safeParse(resumeFrom.runId).success) {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'lastEventId: its run id is not one (letters, digits and _ : . - only, at most 128)' });
  }
  const runId = input.runId ?? resumeFrom?.runId;
  if (resumeFrom && runId !== resumeFrom.runId) {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'lastEventId: belongs to another run' });
  }
  // A run that exists, going or finished, in memory or only in the store, is re-attached to, never started again.
  // A start (with a message) is re-attached only as a retry of the run's own start, never to drop another message.
  const options = input.options;
  const start = input.message === undefined ? undefined : { message: input.message, ...(options === undefined ? {} : { options }) };
  if (runId !== undefined && (await chat.attachable(input.sessionId, runId, start))) {
    const afterSeq = resumeFrom?.seq ?? 0;
    // Followed from there, a live run would send nothing until it passed that event (its end neither), and a finished
    // one nothing at all.
    const shown = chat.eventsShown(runId);
    if (shown !== undefined && afterSeq > shown) {
      throw new TRPCError({ code: 'BAD_REQUEST', message: `lastEventId: run "${runId}" has sent ${shown} events, none numbered ${afterSeq}` });
    }
    return { runId, afterSeq };
  }
  if (resumeFrom) throw new TRPCError({ code: 'NOT_FOUND', message: `lastEventId: run "${resumeFrom.runId}" is no longer available` });
  // An attach (a run id, no message) to a run this chat does not have: the same answer whether the run is in another
  // chat or nowhere, so a session says nothing of the others.
  if (runId !== undefined && input.message === undefined) {
    throw new TRPCError({ code: 'NOT_FOUND', message: `runId: no run "${runId}" in this chat` });
  }
  if (input.message === undefined || input.message.trim() === '') {
    throw new TRPCError({ code: 'BAD_REQUEST', message: 'message: a new run needs a non-empty message' });
  }
  const place = ctx.connection.admitRun((id) => chat.isRunActive(id));
  try {
    const started = await chat.startRun({
      sessionId: input.sessionId,
      message: input.message,
      ...(runId === undefined ? {} : { runId }),
      ...(options === undefined ? {} : { options }),
      // The model's places are shared fairly between connections (see ChatRequest.requester).
      requester: ctx.connection.connectionId,
    });
    place.started(started.runId);
    return { runId: started.runId, afterSeq: 0 };
  } catch (error) {
    place.abandon();
    throw error;
  }
}

export const appRouter = t.router({
  chat: chatRouter,
  sessions: t.router({
    /**
     * One page of chats, most recently active first (ties: the greater id first): at most `limit` (default 100, at
     * most 500) after `cursor`, with the `nextCursor` of the page after (null on the last). Without input, the first
     * page. A chat that changes while a client pages moves to the top: a page after that does not list it again (or,
     * changed in the very millisecond of the cursor, may), and one not read yet is then not listed by the pages after:
     * sessions.watch tells of every such change, so a client that watches before it pages misses none. With
     * `running: true`, only the chats with a run going, in the same order: what a list of the calls waiting across
     * chats reads, whatever page the chats are on. With `query` (1 to 200 characters, trimmed), only the chats whose
     * title contains it, whatever the case, paged the same way: a search of every chat, not only those a client has read.
     */
    list: procedure.input(sessionListInputSchema).query(({ input, ctx }) =>
      ctx.services.chat.listSessionPage({
        limit: input?.limit ?? DEFAULT_SESSION_PAGE,
        ...(input?.cursor === undefined ? {} : { after: input.cursor }),
        ...(input?.running === undefined ? {} : { running: input.running }),
        ...(input?.query === undefined ? {} : { titleContains: input.query }),
      }),
    ),
    /**
     * Changes to the list of sessions, after a first "ready" (sent again on every re-subscribe, and when a slow
     * client's queue overflows): on "ready" a client reads the list; after it, it applies the changes.
     */
    // The place is taken at the first read (a generator's body runs then): a watch tRPC refuses takes none.
    watch: procedure.subscription(({ ctx, signal }) => watchSessions(ctx, signal)),
    /** A chat with its newest messages; `before` reads the page before that message (see `messagesBefore`). */
    get: procedure
      .input(sessionInputSchema.extend({ before: z.number().int().min(0).optional() }))
      .query(({ input, ctx }) => ctx.services.chat.getSession(input.sessionId, input.before)),
    /** Changes a session's own settings: whether its calls stop for a decision, its title. */
    update: changeProcedure.input(sessionUpdateSchema).mutation(({ input, ctx }) => {
      const { sessionId, ...changes } = input;
      return ctx.services.chat.updateSession(sessionId, changes);
    }),
    delete: changeProcedure.input(sessionInputSchema).mutation(async ({ input, ctx }) => ({
      deleted: await ctx.services.chat.deleteSession(input.sessionId),
    })),
  }),
  grants: t.router({
    list: procedure.input(sessionInputSchema).query(({ input, ctx }) => ctx.services.chat.listGrants(input.sessionId)),
    revoke: procedure.input(z.object({ sessionId: idSchema, grantId: idSchema })).mutation(async ({ input, ctx }) => ({
      revoked: await ctx.services.chat.revokeGrant(input.sessionId, input.grantId),
    })),
  }),
  rules: t.router({
    /** Every rule, the person's and the workspace file's, with how it reads and how often it decided. */
    list: procedure.query(async ({ ctx }) => ({ rules: await rulesOf(ctx).list(), workspace: await rulesOf(ctx).workspaceRules() })),
    add: procedure.input(ruleDraftSchema).mutation(({ input, ctx }) => rulesOf(ctx).add({ ...input, source: 'user' })),
    update: procedure
      .input(z.object({ ruleId: idSchema, draft: ruleDraftSchema }))
      .mutation(({ input, ctx }) => rulesOf(ctx).update(input.ruleId, { ...input.draft, source: 'user' })),
    remove: procedure.input(z.object({ ruleId: idSchema })).mutation(async ({ input, ctx }) => ({ removed: await rulesOf(ctx).remove(input.ruleId) })),
    /** The rule "Always allow" on a waiting call would save at this scope, and how it reads: what the card previews. */
    propose: procedure
      .input(z.object({ sessionId: idSchema, approvalId: z.string().max(200), scope: z.enum(['chat', 'workspace', 'global']) }))
      .query(async ({ input, ctx }) => {
        // Drafted from the tool as the card showed it, as the decision's rule is: the rule shown is the rule saved.
        const shown = await ctx.services.chat.waitingAsShown(input.sessionId, input.approvalId);
        if (!shown) throw new TRPCError({ code: 'NOT_FOUND', message: 'approvalId: no call of this chat waits with this id' });
        return rulesOf(ctx).propose(input.sessionId, { toolName: shown.waiting.toolName, arguments: shown.waiting.arguments }, input.scope, shown.tool);
      }),
    /**
     * The recent calls (newest first, from the ledger) that a draft rule would have decided: among the newest 500, or
     * fewer when those pass MAX_AUDIT_PAGE_CHARS, as one page of the audit holds them (so a ledger of huge calls is not
     * read whole for a preview).
     */
    preview: procedure.input(ruleDraftSchema).query(async ({ input, ctx }) => {
      const recent = await ctx.services.chat.audit({ limit: 500 });
      return { matches: await rulesOf(ctx).preview({ ...input, source: 'user' }, recent.entries, ctx.services.catalog.tools()) };
    }),
    /**
     * Whether allow rules from the workspace's own file count (deny rules always do). Trust names the content shown
     * (`sha256` from `list`): CONFLICT when the file holds other content by now.
     */
    trustWorkspace: procedure.input(workspaceTrustSchema).mutation(({ input, ctx }) => rulesOf(ctx).trustWorkspace(input)),
  }),
  audit: t.router({
    /**
     * The ledger of tool calls, newest first: what was asked, who or what decided, how it ended. Paged by cursor; a
     * page ends at `limit` rows or before MAX_AUDIT_PAGE_CHARS characters, whichever comes first.
     */
    list: procedure.input(auditQuerySchema).query(({ input, ctx }) => ctx.services.chat.audit(stripUndefined(input))),
  }),
  tools: t.router({
    /**
     * The tools offered now, and the MCP servers. `otherNames`: names a setting may hold for the tool beside its own
     * (`Tool.otherNames`), so that one turned off under its former name stays off (`turnedOffTools`).
     */
    list: procedure.query(({ ctx }) => ({
      tools: ctx.services.catalog.tools().map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: toolJsonSchema(tool),
        annotations: {
          readOnly: tool.annotations?.readOnly === true,
          destructive: tool.annotations?.destructive === true,
          executesCode: tool.annotations?.executesCode === true,
          exactGrants: grantsNeedExactArguments(tool),
          idempotent: tool.annotations?.idempotent === true,
          openWorld: tool.annotations?.openWorld === true,
        },
        source: tool.source ?? 'builtin',
        ...(tool.otherNames === undefined || tool.otherNames.length === 0 ? {} : { otherNames: [...tool.otherNames] }),
      })),
      servers: ctx.services.catalog.servers(),
    })),
  }),
  model: t.router({
    info: procedure.query(({ ctx }) => ctx.services.modelInfo()),
  }),
  settings: t.router({
    /** The web app's tool settings as saved (defaults when none were); `saved` is false until a first update. */
    get: procedure.query(({ ctx }) => settingsOf(ctx).get()),
    /** Changes some of the settings; a value outside its limits is refused, not clamped. Answers the new settings. */
    update: changeProcedure.input(toolSettingsPatchSchema).mutation(({ input, ctx }) => settingsOf(ctx).update(input)),
    /** The whole settings at once, then again after every change made through this server or another instance of it. */
    watch: procedure.subscription(({ ctx, signal }) => watchSettings(ctx, signal)),
  }),
});

export type AppRouter = typeof appRouter;
export const createCallerFactory = t.createCallerFactory;

function rulesOf(ctx: Context): RuleService {
  if (!ctx.services.rules) throw new TRPCError({ code: 'PRECONDITION_FAILED', message: 'this server keeps no rules' });
  return ctx.services.rules;
}

function settingsOf(ctx: Context): ToolSettingsService {
  if (!ctx.services.settings) throw new TRPCError({ code: 'PRECONDITION_FAILED', message: 'this server keeps no settings' });
  return ctx.services.settings;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
