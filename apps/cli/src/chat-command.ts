import { AnswerUnknownError, createAirlockClient, MAX_REASON_LENGTH, isConnectionLost, isExpired, leftOutNotice, serverCode, shownAddress, type AirlockClient, type KeepAlive, type LoopEvent, type LoopEventOf, type RunStream, type ServerAddress, type ToolInfo } from '@airlock/client';
import { MAX_MESSAGE_LENGTH, randomId, type DeclaredArguments } from '@airlock/core';
import { WebSocket } from 'ws';
import { CONFIRM_ALWAYS, confirmsAlways, parseDecisionAnswer, type DecisionAnswer } from './decision-answer';
import { continuedChatNote } from './continued-chat';
import { leftOutOfChat } from './left-out-of-chat';
import { decisionErrorNote } from './decision-refusal';
import { callLabel, decisionLine, decisionRows, outcomeLine, runEndLines } from './event-labels';
import { INTERRUPTED, LineReader, type Answer, type IgnoredLine, type QuestionOptions } from './line-reader';
import { noteLines } from './note-lines';
import { alwaysPrompt, ANSWER_HINT, decisionPrompt, renderAskNote, renderEditedArguments, renderResult, renderToolCall, reasonLine, showLine, showRow, showText, toolCallCard, type CardLayout } from './render-tool-call';
import { ProseRows } from './prose-rows';
import { quotedLines } from './quoted-lines';
import { RunEvents } from './run-events';
import { styleFor, type TerminalStyle } from './terminal-style';

export interface ChatCommandOptions {
  address: ServerAddress;
  /** Continue this chat. Default a new one. */
  sessionId?: string;
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  env: Readonly<Record<string, string | undefined>>;
  /** How long a decision prompt is shown before an answer's first keystroke counts, in ms. Default `DECISION_GUARD_MS`. */
  decisionGuardMs?: number;
  /** The clock that guard is measured with, in ms. Default `performance.now`. */
  now?: () => number;
  /** When a silent connection is pinged, and dropped without an answer. Default the client's (10 s, then 5 s). */
  keepAlive?: KeepAlive;
  /** How long a decision is waited for, after which the server refuses it. Default the client's (10 s). */
  decisionTimeoutMs?: number;
}

/** What the person is told of a line entered that was not taken. */
/** Why the chat ended when the server turned the client away (quit's reason): the run could not be stopped. */
const REJECTED = 'rejected';

/** Said on exit when the server turned the client away while a call was asked: nothing stopped the run. */
const NOT_STOPPED = 'Exited without stopping the run: this client is not connected, so the run goes on and its calls still wait for a decision (in the web app or another client).';

const IGNORED_NOTES: Record<IgnoredLine, string> = {
  'typed-ahead': 'Ignored an answer typed before this call was shown: read it, then answer.',
  redrawn: 'Ignored an answer typed as this call was drawn again below a note: read it, then answer.',
  pasted: 'Ignored a pasted answer: type a, A or d yourself (a reason after d may be pasted).',
  'not-asked': 'Ignored a line entered while nothing was asked.',
};

/** `airlock chat`: reads prompts, streams each answer, asks for every gated call. Resolves with the exit code. */
export async function runChat(options: ChatCommandOptions): Promise<number> {
  const { output } = options;
  const style = styleFor(output, options.env);
  const screen = new Screen(output, style);
  const reader = new LineReader({
    input: options.input,
    output,
    terminal: options.input.isTTY === true && output.isTTY === true,
    ...(options.decisionGuardMs === undefined ? {} : { guardMs: options.decisionGuardMs }),
    ...(options.now === undefined ? {} : { now: options.now }),
    onIgnored: (why) => {
      // Readline has ended the line entered; a question still open is asked again right after the note, under its card.
      screen.lineEntered();
      for (const row of noteLines(IGNORED_NOTES[why], screen.layout)) screen.line(style.warn(row));
      if (why !== 'not-asked') screen.prompted();
    },
  });
  const quit = new AbortController();
  /** Says `text` at once: above the question being asked, if any, which is drawn again under it with its card. */
  const notice = (text: string) => {
    const rows = noteLines(text, screen.layout, '').map((row) => style.warn(row));
    if (!reader.say(rows.map((row) => `${row}\n`).join(''))) for (const row of rows) screen.line(row);
  };
  let connectionLost = false;
  const client = createAirlockClient({
    url: options.address.url,
    token: options.address.token,
    WebSocket,
    clientLabel: 'terminal',
    // Leaving waits a second for the answer to a call in flight, not five: a third Ctrl-C exits without it.
    closeWaitMs: 1_000,
    ...(options.keepAlive === undefined ? {} : { keepAlive: options.keepAlive }),
    ...(options.decisionTimeoutMs === undefined ? {} : { decisionTimeoutMs: options.decisionTimeoutMs }),
    // A drop is retried however long it lasts; meanwhile the person is told, not left typing into silence.
    onClose: () => {
      if (connectionLost || client.state !== 'reconnecting') return;
      connectionLost = true;
      notice('Connection to Airlock lost; reconnecting… A decision entered meanwhile is sent once it is back.');
    },
    onOpen: () => {
      if (!connectionLost) return;
      connectionLost = false;
      notice('Reconnected to Airlock.');
    },
    onRejected: (message, reason) => {
      for (const row of quotedLines(reason === 'unproven' ? `Not connected: ${message}` : `The server refused the token: ${message}`, style, screen.layout)) screen.line(style.bad(row));
      quit.abort(REJECTED);
      reader.close();
    },
  });
  try {
    const exit = () => {
      quit.abort();
      reader.close();
    };
    const chat = new ChatSession(client, reader, screen, options.sessionId ?? randomId('chat'), options.sessionId !== undefined, quit.signal, exit);
    const onInterrupt = () => chat.interrupt();
    reader.onInterruptKey(onInterrupt);
    process.on('SIGINT', onInterrupt);
    try {
      return await chat.start(options.address.url);
    } finally {
      process.off('SIGINT', onInterrupt);
    }
  } finally {
    reader.close();
    await client.close();
  }
}

class ChatSession {
  /**
   * The server's tools as read last: at start, then again before the card of a call whose tool-start does not say
   * what its tool declared (see `readTools`).
   */
  private tools = new Map<string, ToolInfo>();
  /** The tool of each call of the run followed, and the names it declared when put up, for a decision that shows edited arguments. */
  private readonly callTools = new Map<string, { toolName: string; declared: DeclaredArguments | undefined }>();
  private running = false;
  /** The run followed was re-attached to (replayed from its start), not started here. */
  private attached = false;
  private interrupts = 0;
  private stop: (() => void) | undefined;
  /** The stop asked for the run followed, until that run is seen to end: sent again after a lost connection until the server answers it. */
  private stopRequest: StopRequest | undefined;
  /** What `start` resolves with: 1 once the terminal exited leaving a run it was asked to stop going. */
  private exitStatus = 0;
  /** The events of the run followed, read on while a call is asked about. */
  private events: RunEvents | undefined;
  /** A stop of the run followed was asked for: its calls still announced are not asked about. */
  private stopping = false;
  /** The call the lines shown last are about: a line about another says which call it is about. */
  private lastCall: string | undefined;
  /** Calls whose answer went out on a connection lost before the server answered: it may reach the server yet. */
  private readonly answeredUnconfirmed = new Set<string>();
  /** Approval ids this terminal's decision was accepted for: any other person's decision is said to be another client's. */
  private readonly decidedHere = new Set<string>();
  /** Events of other calls said above an open question, before their turn: each is said there once. */
  private readonly saidAbove = new WeakSet<LoopEvent>();
  /** The calls of the run followed last whose cards were cut: `v` at the next prompt shows them whole. */
  private cutCalls: LoopEventOf<'tool-start'>[] = [];

  constructor(
    private readonly client: AirlockClient,
    private readonly reader: LineReader,
    private readonly screen: Screen,
    private readonly sessionId: string,
    /** The chat may exist already: a run still going in it is followed before anything is asked. */
    private readonly continuing: boolean,
    private readonly quit: AbortSignal,
    /** Ends the chat: nothing more is read or asked. */
    private readonly exit: () => void,
  ) {}

  async start(url: string): Promise<number> {
    const { style } = this.screen;
    // Said at once: a server that takes the connection and never answers is given up on only after some handshakes.
    this.screen.line(style.dim(`Connecting to ${shownAddress(url)}…`));
    let model;
    try {
      model = await this.client.trpc.model.info.query();
      await this.readTools({ quiet: false });
    } catch (error) {
      if (this.quit.aborted) return 1;
      // An unreachable server's error says so itself, with the address and why.
      const message = errorText(error);
      const text = this.client.state === 'unreachable' ? `${message.charAt(0).toUpperCase()}${message.slice(1)}` : `Cannot reach Airlock at ${shownAddress(url)}: ${message}`;
      for (const row of quotedLines(text, style, this.screen.layout)) this.screen.line(style.bad(row));
      return 1;
    }
    const demo = model.demo && !/demo/i.test(model.model) ? ' (a demo, offline)' : '';
    for (const row of quotedLines(`Connected to ${shownAddress(url)}, model ${model.model}${demo}.`, style, this.screen.layout)) this.screen.line(row);
    // Said here too, not only in the server's log: a model its server does not list may be refused at the first message.
    if (model.modelWarning !== undefined) for (const row of quotedLines(`⚠ ${model.modelWarning}`, style, this.screen.layout)) this.screen.line(style.warn(row));
    this.screen.line(style.dim(`Chat ${showLine(this.sessionId, style)}. Ctrl-C stops an answer; Ctrl-D exits.`));
    if (this.continuing) await this.rejoin();
    while (!this.quit.aborted) {
      const line = await this.ask(style.bold('you› '));
      if (line === null) break;
      if (line === INTERRUPTED || line.trim() === '') continue;
      this.interrupts = 0;
      // Cut cards say "type v": that letter shows them, and is never sent to the model as a message meanwhile.
      if (line.trim() === 'v' && this.cutCalls.length > 0) {
        for (const event of this.cutCalls) for (const row of renderToolCall(event, style, { ...this.screen.layout, whole: true }, this.tools.get(event.toolName))) this.screen.line(row);
        continue;
      }
      // Refused here, not by the server: a run that never started is not "lost", and the person is told what to do.
      if (line.length > MAX_MESSAGE_LENGTH) {
        const note = `Not sent: this message is ${line.length.toLocaleString('en')} characters long, and Airlock takes at most ${MAX_MESSAGE_LENGTH.toLocaleString('en')} characters in one message. Nothing was started; shorten it, or send it in parts.`;
        for (const row of noteLines(note, this.screen.layout, '')) this.screen.line(style.warn(row));
        continue;
      }
      await this.follow(line);
    }
    this.screen.endLine();
    return this.quit.reason === REJECTED ? 1 : this.exitStatus;
  }

  /**
   * Ctrl-C: the first stops the answer being written; one more (or one with nothing to stop, twice) exits, though the
   * run it stopped has ended in between. A line entered starts the count again. A stop the server has not yet
   * answered (the connection is down) is waited for before exiting; one more Ctrl-C exits without it, saying that the
   * run goes on: a run left going keeps its calls waiting, and anyone may allow them.
   */
  interrupt(): void {
    const { style } = this.screen;
    this.interrupts++;
    if (this.interrupts >= 2) {
      const request = this.stopRequest;
      if (request === undefined || request.answer === 'stopped' || request.answer === 'held' || request.answer === 'not-running') {
        this.exit();
        return;
      }
      if (request.answer === undefined && this.interrupts === 2) {
        this.screen.line(style.warn('Stopping the run: waiting for the server to take the stop… Ctrl-C again to exit without it'));
        void request.answered.then((answer) => {
          if (this.quit.aborted) return;
          if (answer === 'failed') this.leftGoing();
          else if (answer !== 'held') this.screen.line(style.dim(answer === 'stopped' ? 'The server took the stop: the run is stopped.' : 'The run had ended already.'));
          this.exit();
        });
        return;
      }
      this.leftGoing();
      this.exit();
      return;
    }
    this.reader.interrupt();
    if (this.running) {
      const offline = this.client.state !== 'open';
      this.screen.line(style.dim(offline ? 'Stopping… the stop is sent once the connection is back. (Ctrl-C again to exit)' : 'Stopping… (Ctrl-C again to exit)'));
      this.stop?.();
    } else {
      this.screen.line(style.dim('(Ctrl-C again or Ctrl-D to exit)'));
    }
  }

  /** Said on exiting while a stop asked for was never taken by the server. */
  private leftGoing(): void {
    this.exitStatus = 1;
    for (const row of noteLines('Exited without stopping the run: the server did not take the stop, so the run goes on and its calls still wait for a decision (in the web app or another client).', this.screen.layout, '')) {
      this.screen.line(this.screen.style.bad(row));
    }
  }

  /**
   * Asks the server to stop `run`, again after each connection lost before its answer (a second stop of a run stops
   * nothing more), until it answers, or the request fails otherwise (said), or the terminal exits.
   */
  private sendStop(run: RunStream): StopRequest {
    const { screen } = this;
    const request: StopRequest = {
      answer: undefined,
      answered: (async (): Promise<StopAnswer> => {
        for (;;) {
          try {
            const answer = await run.stop();
            if (!answer.running) return 'not-running';
            if (answer.paused === undefined) return 'stopped';
            // The stop does not hold for good yet: the run is paused (stopped when the server takes it up), or the
            // stop could not be stored (the run is stopped, a restart before it is stored brings it back, and with
            // several instances so does another instance taking the run over). The server's words say which, and
            // what happens.
            for (const row of quotedLines(`The server took the stop: ${answer.paused}`, screen.style, screen.layout)) screen.line(screen.style.warn(row));
            return 'held';
          } catch (error) {
            if (this.quit.aborted) return 'failed';
            if (isConnectionLost(error)) continue;
            for (const row of quotedLines(`The stop was not sent (${errorText(error)}): the run goes on.`, screen.style, screen.layout)) screen.line(screen.style.bad(row));
            return 'failed';
          }
        }
      })().then((answer) => {
        request.answer = answer;
        // Not stopped: the run's calls are asked about again, as they still wait.
        if (answer === 'failed' && this.stopRequest === request) this.stopping = false;
        return answer;
      }),
    };
    return request;
  }

  /** The server's answer to the stop asked for, once it comes; undefined if none was asked, or the terminal exits first. */
  private async stopAnswer(): Promise<StopAnswer | undefined> {
    const request = this.stopRequest;
    if (request === undefined || request.answer !== undefined || this.quit.aborted) return request?.answer;
    const exited = new Promise<undefined>((resolve) => this.quit.addEventListener('abort', () => resolve(undefined), { once: true }));
    return Promise.race([request.answered, exited]);
  }

  private async ask(prompt: string, options: QuestionOptions = {}): Promise<Answer> {
    this.screen.endLine();
    this.screen.prompted();
    const answer = await this.reader.question(prompt, options);
    // Readline ends an entered line itself; an interrupted or ended prompt leaves the cursor after it.
    if (typeof answer === 'string') this.screen.lineEntered();
    return answer;
  }

  /**
   * Follows the run still going in this chat, if any (started in the web app, by another client, or before a
   * restart): its events so far are replayed, then it goes on live, and each of its calls still waiting is asked.
   */
  private async rejoin(): Promise<void> {
    const { style } = this.screen;
    let activeRunId: string | null;
    let paused: string | undefined;
    let leftOut: string[] | undefined;
    let messagesBefore: number;
    let title: string;
    try {
      ({ activeRunId, paused, leftOut, title, messagesBefore } = await this.client.trpc.sessions.get.query({ sessionId: this.sessionId }));
    } catch (error) {
      // No such chat yet: the first message starts it under this id, and the person is told so.
      if (serverCode(error) === 'NOT_FOUND') {
        for (const row of quotedLines(continuedChatNote(null, this.sessionId), style, this.screen.layout)) this.screen.line(style.warn(row));
        return;
      }
      if (!this.quit.aborted) for (const row of quotedLines(`Cannot read chat ${this.sessionId}: ${errorText(error)}`, style, this.screen.layout)) this.screen.line(style.bad(row));
      return;
    }
    for (const row of quotedLines(continuedChatNote({ sessionId: this.sessionId, title }, this.sessionId), style, this.screen.layout)) this.screen.line(style.dim(row));
    // The chat's history is not shown here, but what the model was not given of it is, in every part of it.
    const damaged = await leftOutOfChat({ ...(leftOut === undefined ? {} : { leftOut }), messagesBefore }, (before) => this.client.trpc.sessions.get.query({ sessionId: this.sessionId, before })).catch((error: unknown) => {
      if (!this.quit.aborted) for (const row of quotedLines(`Cannot read the earlier part of chat ${this.sessionId}: ${errorText(error)}`, style, this.screen.layout)) this.screen.line(style.bad(row));
      return leftOut ?? [];
    });
    if (damaged.length > 0) for (const row of quotedLines(leftOutNotice(damaged), style, this.screen.layout)) this.screen.line(style.warn(row));
    if (activeRunId === null) return;
    this.screen.line(style.dim('A run is still going in this chat; following it from its start.'));
    if (paused !== undefined) {
      const note = `It is paused: Airlock cannot store its data for now (${paused}). Its calls still wait, and a decision on them is refused until it can store again; it tries again by itself, and the run goes on from there.`;
      for (const row of quotedLines(note, style, this.screen.layout)) this.screen.line(style.warn(row));
    }
    this.interrupts = 0;
    await this.follow(this.client.attachRun({ sessionId: this.sessionId, runId: activeRunId, signal: this.quit }), { attached: true });
  }

  private async follow(input: string | RunStream, { attached = false } = {}): Promise<void> {
    const run = typeof input === 'string' ? this.client.startRun({ sessionId: this.sessionId, message: input, signal: this.quit }) : input;
    this.attached = attached;
    this.running = true;
    this.stopping = false;
    this.stopRequest = undefined;
    this.stop = () => {
      this.stopping = true;
      this.stopRequest ??= this.sendStop(run);
    };
    const events = new RunEvents(run);
    this.events = events;
    this.cutCalls = [];
    const text = new ProseRows(this.screen.style, 'text');
    const reasoning = new ProseRows(this.screen.style, 'reasoning');
    let previous: LoopEvent['type'] | undefined;
    let ended = false;
    try {
      for (let event = await events.next(); event !== undefined; event = await events.next()) {
        if (event.type === 'run-end') ended = true;
        if (event.type !== 'text-delta') this.screen.stream(text, (moved) => text.end(this.screen.columns, { moved }));
        if (event.type !== 'reasoning-delta') this.screen.stream(reasoning, (moved) => reasoning.end(this.screen.columns, { moved }));
        // Reasoning and answer each start on a line of their own, so one is never read as the other.
        if (event.type !== previous && (event.type === 'text-delta' || event.type === 'reasoning-delta')) this.screen.endLine();
        previous = event.type;
        await this.show(event, text, reasoning);
      }
    } catch (error) {
      // A new run the server refused (another run going in the chat, a limit) never started: "lost" had the person
      // wonder what it did unwatched. A connection gone before any event leaves that unknown: it may have started.
      const refused = typeof input === 'string' && previous === undefined && serverCode(error) !== undefined;
      if (!this.quit.aborted) for (const row of quotedLines(`${refused ? 'Not started' : 'Lost the run'}: ${errorText(error)}`, this.screen.style, this.screen.layout)) this.screen.line(this.screen.style.bad(row));
    } finally {
      this.running = false;
      this.stopping = false;
      this.stop = undefined;
      // A run seen to end needs no stop; one followed no longer (the stream failed) may still go on.
      if (ended) this.stopRequest = undefined;
      this.events = undefined;
      await events.close();
      this.screen.endLine();
    }
  }

  private async show(event: LoopEvent, text: ProseRows, reasoning: ProseRows): Promise<void> {
    const { screen } = this;
    const { style } = screen;
    switch (event.type) {
      case 'run-start':
        this.callTools.clear();
        return;
      case 'status':
        // A call's start is its card's next line ("→ ran"); a wait for a place to run is worth a line.
        if (event.toolCallId !== undefined && event.waitingForPlace !== true) return;
        screen.line(style.dim(showRow(event.text, style, screen.layout)));
        return;
      case 'text-delta':
        screen.stream(text, (moved) => text.push(event.text, screen.columns, { moved }));
        return;
      case 'reasoning-delta':
        screen.stream(reasoning, (moved) => reasoning.push(event.text, screen.columns, { moved }));
        return;
      case 'tool-start': {
        screen.endLine();
        this.callTools.set(event.toolCallId, { toolName: event.toolName, declared: event.tool?.declared });
        this.lastCall = event.toolCallId;
        // The card marks names against the tool as the call was put up, which its tool-start says; only one stored
        // before tool-starts said is read against the list, read again for it.
        if (event.tool?.declared === undefined) await this.readTools();
        const card = toolCallCard(event, style, screen.layout, this.tools.get(event.toolName));
        for (const line of card.lines) screen.line(line);
        if (card.cut) this.cutCalls.push(event);
        if (!event.awaitingConfirmation) return;
        if (this.stopping) {
          // Said only once the server has taken the stop: until then (the connection is down) the call still waits.
          const answer = await this.stopAnswer();
          if (answer === undefined) return;
          if (answer === 'stopped' || answer === 'held') {
            const note = answer === 'stopped' ? 'Not asked: the run was stopped, and this call will not run.' : 'Not asked: the run is stopped when it is taken up, and this call will not run.';
            for (const row of noteLines(note, screen.layout)) screen.line(style.dim(row));
            return;
          }
        }
        if (await this.stillWaiting(event.approvalId)) await this.decide(event);
        return;
      }
      case 'tool-decision':
        // A person's decision this terminal did not send (a replay after a restart, another client's) says so.
        this.showDecision(event, { elsewhere: !this.decidedHere.has(event.approvalId) && !this.answeredUnconfirmed.has(event.approvalId) });
        return;
      case 'tool-end':
        this.showEnd(event);
        return;
      case 'run-end': {
        screen.endLine();
        for (const line of runEndLines(event, style, screen.layout)) screen.line(event.reason === 'done' ? line : style.bad(line));
        return;
      }
    }
  }

  private showDecision(event: LoopEventOf<'tool-decision'>, { elsewhere = false } = {}): void {
    const { screen } = this;
    const { style } = screen;
    // A reason of several lines (pasted) keeps them, each after the first indented under the decision.
    const reason = event.reason === undefined ? '' : showText(event.reason, style).replaceAll('\n', '\n    ');
    const call = this.nameUnlessLast(event.toolCallId, this.callTools.get(event.toolCallId)?.toolName ?? '');
    const line = decisionLine(event, reason, event.rule === undefined ? '' : reasonLine(event.rule, (notation) => style.escape(notation)), { elsewhere, call });
    for (const row of decisionRows(line, style, screen.layout)) screen.line(row);
    if (event.editedArguments !== undefined) {
      const { toolName = '', declared } = this.callTools.get(event.toolCallId) ?? {};
      for (const line of renderEditedArguments(toolName, event.editedArguments, style, screen.layout, declared === undefined ? this.tools.get(toolName) : { declared })) screen.line(line);
    }
  }

  private showEnd(event: LoopEventOf<'tool-end'>): void {
    const { screen } = this;
    screen.line(outcomeLine(event, screen.style, this.nameUnlessLast(event.toolCallId, event.toolName)));
    if (event.result !== '' && event.outcome !== 'denied') for (const line of renderResult(event.result, screen.style, screen.layout)) screen.line(line);
  }

  /**
   * Reads the server's tools again. Before the card of a call whose tool-start was stored before it said what the
   * tool declared: an MCP server may have changed a tool's schema (or added the tool) since the list was read, and
   * the list read now is nearer to the tool the call was put up with than the one read when the chat started. Unless
   * `quiet` is false, a failed read keeps the list read before.
   */
  private async readTools({ quiet = true } = {}): Promise<void> {
    try {
      this.tools = new Map((await this.client.trpc.tools.list.query()).tools.map((tool) => [tool.name, tool]));
    } catch (error) {
      if (!quiet) throw error;
    }
  }

  /** The `callLabel` of a call the lines shown last are not about, which they are about from now on; '' for that call. */
  private nameUnlessLast(toolCallId: string, toolName: string): string {
    if (toolCallId === this.lastCall) return '';
    this.lastCall = toolCallId;
    return callLabel(toolName, toolCallId, this.screen.style);
  }

  /**
   * Whether a call announced as waiting still waits. A live run's call does; in a run followed from its start, a
   * call may have been decided since (its decision comes later in the replay), and is not asked again.
   */
  private async stillWaiting(approvalId: string): Promise<boolean> {
    if (!this.attached) return true;
    try {
      return (await this.client.pending(this.sessionId)).some((call) => call.approvalId === approvalId);
    } catch {
      // Asked anyway: a decision on a call that no longer waits is answered as such, and nothing runs twice.
      return true;
    }
  }

  private async decide(event: LoopEventOf<'tool-start'>): Promise<void> {
    const { screen } = this;
    const { style } = screen;
    const ended = endsTheWait(event.toolCallId);
    const known = this.events?.find(ended);
    if (known !== undefined) {
      this.settledElsewhere(known);
      return;
    }
    const askNote = () => renderAskNote(event, this.tools.get(event.toolName), screen.layout).map((line) => style.dim(line));
    for (const line of askNote()) screen.line(line);
    // Drawn again, for the terminal's size then, under each note written while the question is open: the person
    // answers with the whole card in view, never one pushed up past the top by the notes.
    const card = () => [...renderToolCall(event, style, screen.layout, this.tools.get(event.toolName)), ...askNote()].map((line) => `${line}\n`).join('');
    const cardOnly = () => renderToolCall(event, style, screen.layout, this.tools.get(event.toolName)).map((line) => `${line}\n`).join('');
    let redraw = false;
    for (;;) {
      if (this.stopping && !(await this.askedDespiteStop())) return;
      // A note said after the answer before (it was not understood, or not sent) pushed the card up: it comes again.
      if (redraw) screen.write(card());
      redraw = true;
      const line = await this.askUnlessSettled(decisionPrompt(event.toolName, style, screen.layout), ended, card);
      if (typeof line === 'object' && line !== null) {
        this.settledElsewhere(line);
        return;
      }
      if (line === INTERRUPTED) return;
      if (line === null) {
        this.inputEnded();
        return;
      }
      if (line.trim() === 'v') {
        for (const row of renderToolCall(event, style, { ...screen.layout, whole: true }, this.tools.get(event.toolName))) screen.line(row);
        redraw = false;
        continue;
      }
      const parsed = parseDecisionAnswer(line);
      if (parsed === null) {
        for (const row of noteLines(ANSWER_HINT, screen.layout)) screen.line(style.dim(row));
        continue;
      }
      let answer: DecisionAnswer;
      if (parsed === CONFIRM_ALWAYS) {
        // A lone A is what a becomes with Caps Lock on: a lasting grant takes a second, deliberate key, under the card
        // again (with what it covers in place of the note), and the guard against keys typed ahead holds for it too.
        screen.write(cardOnly());
        const confirm = await this.askUnlessSettled(alwaysPrompt(event, this.tools.get(event.toolName), style, screen.layout), ended, cardOnly);
        if (typeof confirm === 'object' && confirm !== null) {
          this.settledElsewhere(confirm);
          return;
        }
        if (confirm === INTERRUPTED) return;
        if (confirm === null) {
          this.inputEnded();
          return;
        }
        if (!confirmsAlways(confirm)) {
          for (const row of noteLines('Nothing decided: "Always allow" was not granted.', screen.layout)) screen.line(style.dim(row));
          continue;
        }
        answer = { decision: 'always' };
      } else answer = parsed;
      if (answer.decision === 'deny' && answer.reason.length > MAX_REASON_LENGTH) {
        // Sent whole, the server refused it as not valid: the person had to type the reason again, and shorter.
        const reason = cutReason(answer.reason);
        const note = `The reason is ${answer.reason.length.toLocaleString('en')} characters long, and Airlock takes at most ${MAX_REASON_LENGTH.toLocaleString('en')}: it was cut to its first ${reason.length.toLocaleString('en')}.`;
        for (const row of noteLines(note, screen.layout)) screen.line(style.warn(row));
        answer = { decision: 'deny', reason };
      }
      try {
        if (this.client.state === 'reconnecting') for (const row of noteLines('Not connected: the decision is sent once the connection is back.', screen.layout)) screen.line(style.dim(row));
        const result = await this.client.decide({ sessionId: this.sessionId, approvalId: event.approvalId, ...answer });
        if (result.resolved) this.decidedHere.add(event.approvalId);
        if ('alwaysNotSaved' in result) {
          // The allow holds; what was to last was not kept, and the next call like it is asked.
          const note = `Allowed this once: "always" could not be saved (${result.alwaysNotSaved}), so a call like this one will be asked again.`;
          for (const row of quotedLines(note, style, screen.layout, '  ')) screen.line(style.warn(row));
        }
        if (!result.resolved) {
          screen.line(style.warn(result.status === 'already-decided' ? `  Already decided: ${showLine(String(result.decision ?? 'unknown'), style)}` : '  This call is no longer waiting.'));
        }
        return;
      } catch (error) {
        if (isConnectionLost(error) || isExpired(error)) {
          // Unanswered: the server may have applied it (it is said to be uncertain, never "not sent", and if its
          // decision shows, the terminal says whose answer that may have been). Past its deadline it refuses it; the
          // connection gone before then, it may still apply it until then, and the person is told so at once.
          this.answeredUnconfirmed.add(event.approvalId);
          const openForMs = isExpired(error) ? 0 : answerOpenForMs(error);
          for (const row of noteLines(isExpired(error) ? LOST_ANSWER_NOTE : answerUnknownNote(openForMs), screen.layout)) screen.line(style.bad(row));
          if (openForMs > 0) {
            // Not asked again while the answer sent may still land: a second answer then could be overtaken by the
            // first (a frozen server reads the old connection's bytes first), and the person would have decided twice.
            const settled = await this.settledOrAfter(ended, openForMs);
            if (settled !== undefined) {
              this.settledElsewhere(settled);
              return;
            }
            if (this.quit.aborted) return;
            if (!this.stopping) for (const row of noteLines(ANSWER_CLOSED_NOTE, screen.layout)) screen.line(style.dim(row));
          }
          continue;
        }
        for (const row of quotedLines(decisionErrorNote(error, errorText(error)), style, screen.layout, '  ')) screen.line(style.bad(row));
      }
    }
  }

  /**
   * Whether a call is asked about again once a stop of its run was asked for (Ctrl-C while an answer was on its way
   * and the connection down): only when the stop fails. Until the server answers it, nothing is asked, and the
   * terminal says so: the stop is what the person asked for last.
   */
  private async askedDespiteStop(): Promise<boolean> {
    const { screen } = this;
    for (const row of noteLines('Not asked again: the run is being stopped.', screen.layout)) screen.line(screen.style.dim(row));
    return (await this.stopAnswer()) === 'failed';
  }

  /** No answer will come to a question about a call: input ended, or the server turned the client away. */
  private inputEnded(): void {
    const { screen } = this;
    const { style } = screen;
    if (this.quit.reason === REJECTED) {
      // Turned away (a server restarted with another token): no stop can be sent, and the call waits on there.
      this.exitStatus = 1;
      for (const row of noteLines(NOT_STOPPED, screen.layout, '')) screen.line(style.dim(row));
      return;
    }
    // Input ended (Ctrl-D): nobody is left to decide, so the run is stopped rather than left waiting.
    for (const row of noteLines('Input ended: stopping the run, as nobody is left here to decide.', screen.layout, '')) screen.line(style.dim(row));
    this.stop?.();
  }

  /**
   * The event that ends the wait for a call (`ended`), if one comes within `ms`; undefined once `ms` has passed, or
   * when the terminal is leaving.
   */
  private async settledOrAfter(ended: (event: LoopEvent) => boolean, ms: number): Promise<LoopEvent | undefined> {
    const watching = new AbortController();
    const timeUp = new Promise<undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), ms);
      watching.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
    });
    const leaving = new Promise<undefined>((resolve) => this.quit.addEventListener('abort', () => resolve(undefined), { once: true }));
    try {
      const arrived = this.events?.arrival(ended, watching.signal).then((event) => event ?? timeUp) ?? timeUp;
      return await Promise.race([arrived, timeUp, leaving]);
    } finally {
      watching.abort();
    }
  }

  /**
   * Asks `prompt`, unless the run's events say first that the call asked about no longer waits (another client
   * decided it, or the run ended): then the question is withdrawn, and that event is the answer.
   */
  private async askUnlessSettled(prompt: string, ended: (event: LoopEvent) => boolean, card: () => string): Promise<Answer | LoopEvent> {
    const events = this.events;
    if (events === undefined) return this.ask(prompt, { decides: true, card });
    const known = events.find(ended);
    if (known !== undefined) return known;
    const watching = new AbortController();
    const answer = this.ask(prompt, { decides: true, card });
    // This terminal's own decisions are shown in their turn only.
    const otherCall = (event: LoopEvent) =>
      (event.type === 'tool-start' || (event.type === 'tool-decision' && !this.decidedHere.has(event.approvalId) && !this.answeredUnconfirmed.has(event.approvalId))) &&
      !ended(event) &&
      !this.saidAbove.has(event);
    try {
      for (;;) {
        const arrived = events.arrival((event) => ended(event) || isRunNews(event) || otherCall(event), watching.signal);
        const first = await Promise.race([answer, arrived.then<Answer | LoopEvent>((event) => event ?? answer)]);
        if (typeof first === 'object' && first !== null && isRunNews(first)) {
          // News of the run itself (it was resumed after a restart) is said now, above the question still open.
          events.remove(first);
          this.sayAbove(first.text);
          continue;
        }
        if (typeof first === 'object' && first !== null && (first.type === 'tool-start' || first.type === 'tool-decision') && otherCall(first)) {
          // Another call of the batch, or another client's decision on one, is said above the question as it comes,
          // as the web shows every card of a turn at once: the person never decides one call believing it is the
          // only one. It stays in its place, and is shown again in its turn.
          this.saidAbove.add(first);
          this.sayCallAbove(first);
          continue;
        }
        if (typeof first === 'object' && first !== null) this.reader.withdraw();
        return first;
      }
    } finally {
      watching.abort();
    }
  }

  /** Writes another call's card, or another client's decision on it, above the question being asked. */
  private sayCallAbove(event: LoopEventOf<'tool-start'> | LoopEventOf<'tool-decision'>): void {
    const { screen } = this;
    const { style } = screen;
    let rows: string[];
    if (event.type === 'tool-start') {
      const heading = event.awaitingConfirmation ? 'Also in this turn, asked after this one:' : 'Also in this turn:';
      rows = [...noteLines(heading, screen.layout).map((row) => style.dim(row)), ...toolCallCard(event, style, screen.layout, this.tools.get(event.toolName)).lines];
    } else {
      const reason = event.reason === undefined ? '' : showText(event.reason, style).replaceAll('\n', '\n    ');
      const toolName = this.toolNameOf(event.toolCallId);
      const rule = event.rule === undefined ? '' : reasonLine(event.rule, (notation) => style.escape(notation));
      rows = decisionRows(decisionLine(event, reason, rule, { elsewhere: true, call: callLabel(toolName, event.toolCallId, style) }), style, screen.layout);
    }
    const text = rows.map((row) => `${row}\n`).join('');
    if (!this.reader.say(text)) for (const row of rows) screen.line(row);
  }

  /** The tool a call of this run is for, from its tool-start: shown already, or read ahead and not yet shown. */
  private toolNameOf(toolCallId: string): string {
    const shown = this.callTools.get(toolCallId)?.toolName;
    if (shown !== undefined) return shown;
    const start = this.events?.find((event) => event.type === 'tool-start' && event.toolCallId === toolCallId);
    return start?.type === 'tool-start' ? start.toolName : '';
  }

  /** Writes `text` above the question being asked, drawn again under it with its card; on a line of its own when none is. */
  private sayAbove(text: string): void {
    const { screen } = this;
    const line = screen.style.dim(showRow(text, screen.style, screen.layout));
    if (!this.reader.say(`${line}\n`)) screen.line(line);
  }

  /** Says what settled the call asked about, at once: its decision (or end) is shown here, not again in its turn. */
  private settledElsewhere(event: LoopEvent): void {
    const { screen } = this;
    if (event.type === 'tool-decision' || event.type === 'tool-end') {
      this.events?.remove(event);
      if (event.type !== 'tool-decision') this.showEnd(event);
      else if (!this.answeredUnconfirmed.has(event.approvalId)) this.showDecision(event, { elsewhere: true });
      else {
        this.showDecision(event);
        if (event.source === 'user') for (const row of noteLines('Decided while the connection was lost: by the answer entered here before it, or in another client.', screen.layout)) screen.line(screen.style.dim(row));
      }
      return;
    }
    // The run's end itself is shown in its turn, after what came before it.
    for (const row of noteLines('Not asked any more: the run has ended.', screen.layout)) screen.line(screen.style.dim(row));
  }
}

/**
 * The server's answer to a stop: it stopped the run, or the run was not going; or the stop does not hold for good yet
 * (`held`: the run is paused, its data cannot be stored for now, and is stopped when taken up; or the stop could not be
 * stored); or the stop was not sent.
 */
type StopAnswer = 'stopped' | 'held' | 'not-running' | 'failed';

interface StopRequest {
  /** Set once `answered` resolves. */
  answer: StopAnswer | undefined;
  answered: Promise<StopAnswer>;
}

/** Said when a decision's deadline passed before the server answered it. */
const LOST_ANSWER_NOTE =
  'No answer came from the server in time: the decision may have reached it before, and is shown if it did; it is not applied from now on. Answer again to decide.';

/** How long the server may still apply a decision whose connection went after it was sent (0 when not known). */
function answerOpenForMs(error: unknown): number {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause instanceof AnswerUnknownError ? cause.openForMs : 0;
}

/** Said at once when the connection went after a decision was sent, before the server answered it. */
function answerUnknownNote(openForMs: number): string {
  if (openForMs <= 0) return 'The connection went before the server answered: the decision may or may not have been applied, and is shown if it was. Answer again to decide.';
  const seconds = Math.ceil(openForMs / 1_000);
  return `The connection went before the server answered: the decision may or may not have been applied, or may still be in the next ${seconds} s, and is shown if it is. Asked again once that time has passed.`;
}

/** Said when the time in which a decision whose answer is unknown could still be applied has passed. */
const ANSWER_CLOSED_NOTE = 'The earlier answer can no longer be applied (if it was before, it is shown here). Answer again to decide.';

/** A deny reason cut to the characters the server takes, never between the two halves of a character outside the BMP. */
function cutReason(reason: string): string {
  const cut = reason.slice(0, MAX_REASON_LENGTH);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** What an error says; a server's or the network's words, to be shown escaped. */
function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * News of the run as a whole, said above a question still open: "Resumed after a server restart". Other statuses
 * wait their turn, after the question: they may quote a model's call ("Calling: <name>"), and nothing of a model's
 * may come between the card asked about and its question.
 */
function isRunNews(event: LoopEvent): event is LoopEventOf<'status'> {
  return event.type === 'status' && event.toolCallId === undefined && event.resumed === true;
}

/** The events after which the call `toolCallId` no longer waits for a decision. */
function endsTheWait(toolCallId: string): (event: LoopEvent) => boolean {
  return (event) => ((event.type === 'tool-decision' || event.type === 'tool-end') && event.toolCallId === toolCallId) || event.type === 'run-end';
}

/** Writes to the terminal and remembers whether the cursor is at the start of a line, and who wrote last. */
class Screen {
  private atLineStart = true;
  /** What `stream` wrote last for, if nothing was written since. */
  private streamed: object | undefined;

  constructor(
    private readonly output: NodeJS.WritableStream & { columns?: number; rows?: number },
    readonly style: TerminalStyle,
  ) {}

  /** The terminal's size now (it may be resized), for laying out cards. */
  get layout(): CardLayout {
    const { columns, rows } = this.output;
    return { ...(typeof columns === 'number' && columns > 0 ? { columns } : {}), ...(typeof rows === 'number' && rows > 0 ? { rows } : {}) };
  }

  get columns(): number | undefined {
    return this.layout.columns;
  }

  write(text: string): void {
    if (text === '') return;
    this.output.write(text);
    this.atLineStart = text.endsWith('\n');
    this.streamed = undefined;
  }

  /**
   * Writes what `source` makes, told whether anything else was written (or entered) since its last write: a row it
   * left open is then not where the cursor is.
   */
  stream(source: object, make: (moved: boolean) => string): void {
    const text = make(this.streamed !== source);
    if (text === '') return;
    this.write(text);
    this.streamed = source;
  }

  line(text: string): void {
    this.endLine();
    this.write(`${text}\n`);
  }

  endLine(): void {
    if (!this.atLineStart) this.write('\n');
  }

  prompted(): void {
    this.atLineStart = false;
    this.streamed = undefined;
  }

  lineEntered(): void {
    this.atLineStart = true;
    this.streamed = undefined;
  }
}
