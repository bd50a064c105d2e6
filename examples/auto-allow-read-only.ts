// Sends one message to a running Airlock server and decides its tool calls: read-only tools that stay on this machine
// (by the annotations the server lists) are allowed at once, unless a deny rule asked about the call (its card says
// why); anything else is asked on stdin. Every decision that
// stood is written as one JSON line to the ledger (stdout, or --ledger <file>); the answer goes to stderr. What the
// model wrote is printed with every control, bidi and invisible character as a \u{…} escape, behind a "┃ " gutter on
// every row (the example wraps it to the terminal's width itself), and a card's rows behind a "│ " gutter.
// An answer counts only when it comes once its card has been shown for 0.6 s (AIRLOCK_DECISION_GUARD_MS, in ms):
// a line typed before, or a doubled y⏎ that lands on the next card, is ignored, and the example says so. A call
// decided first in another client (the web app, `airlock chat`) is not asked about, or its question is withdrawn, and
// its ledger line says so, with the arguments that client edited it to, which are what ran.
//
// The token comes from AIRLOCK_TOKEN, else the file AIRLOCK_TOKEN_FILE names (readable by you alone, as `airlock chat`
// asks), else the link: the one-time code of the link as printed (#code=, exchanged once for the token), or its #token=.
//
// From the repository's root (the script runs in examples/, so relative --ledger and AIRLOCK_TOKEN_FILE paths are taken from there):
//   AIRLOCK_URL='http://airlock-….localhost:7700/#code=…' pnpm --filter @airlock/examples auto-allow-read-only 'list the files'
import {
  createAirlockClient,
  LinkCodeError,
  MAX_REASON_LENGTH,
  parseStartupLink,
  reasonParts,
  resolveStartupLink,
  serverCode,
  shownAddress,
  socketUrl,
  toVisibleText,
  UNCHECKED_ARGUMENT_NOTE,
  UNCHECKED_INNER_NOTE,
  uncheckedArgumentsNote,
  UNDECLARED_ARGUMENT_NOTE,
  UNDECLARED_INNER_NOTE,
  undeclaredArgumentsNote,
  unshownDefaultsNote,
  visibleArguments,
  visibleTextString,
  type ConfirmResult,
  type DecideInput,
  type LoopEventOf,
  type ShownReason,
  type StartupLink,
  type ToolInfo,
  type VisibleText,
} from '@airlock/client';
import { appendFileSync, closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';

/** What this example decided for one call, and who made that decision: its read-only rule, the person, or itself. */
type Choice =
  | { decision: 'allow'; by: 'read-only rule' | 'person' }
  | { decision: 'deny'; by: 'person' | 'example'; reason?: string };

interface LedgerEntry {
  at: string;
  sessionId: string;
  runId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  /** The decision that stood: this example's, or the one made before it ("timeout" and "cancel" too); null when the server no longer knew the call. */
  decision: 'allow' | 'deny' | 'timeout' | 'cancel' | null;
  /** Who made it; "elsewhere" when another decision stood (one made before this example's in another client, the server's, a deny rule's refusing this example's allow). */
  by: Choice['by'] | 'elsewhere' | null;
  /** With "elsewhere": how the run reported the decision ("user": a person in another client; "grant", "rule", "system"). */
  source?: string;
  reason?: string;
  /** With "elsewhere": the arguments another client edited the call to before allowing it, which are what ran (`arguments` stays the model's proposal). */
  editedArguments?: Record<string, unknown>;
  /** What the server answered: "resolved", or why it did not take this example's decision. */
  status: string;
  /** This example's decision, when it is not the one that stood. */
  attempted?: Choice;
}

/**
 * What a model or a tool wrote, as it may be printed: every hidden, reordering or look-alike character as a `\u{HEX}`
 * escape, as every Airlock client shows it (`toVisibleText`). The terminal then shows what runs, and acts on nothing.
 */
function visible(text: string): string {
  return visibleTextString(toVisibleText(text));
}

/** A ledger line: JSON with every character outside printable ASCII as a `\uXXXX` escape, so it parses to the very values and is safe to print. */
function ledgerLine(entry: LedgerEntry): string {
  return `${JSON.stringify(entry).replace(/[^\x20-\x7E]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
}

/** The gutter before every row of what the model wrote. */
const MODEL_GUTTER = '┃ ';
/** The gutter before every row of a card's arguments, and of what a server said. */
const GUTTER = '│ ';

/**
 * The columns a row may fill: the terminal's width (COLUMNS when stderr is not a terminal, else 80), less one, so no
 * terminal wraps a row itself.
 */
const columns = () => Math.max(process.stderr.columns || Number(process.env.COLUMNS) || 80, 20) - 1;
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * Lays escaped text out in rows, each behind `gutter`, wrapped here to the terminal's width: a terminal left to wrap
 * a long line starts its next row at the left edge, where text padded to the width would draw `⏺ list_directory` as
 * this example's own card. A character outside ASCII is counted two columns wide per code point and a tab eight, at
 * least what a terminal draws them in, so a row is never wider than counted. An escape (`\u{202E}`) and a character
 * with its marks stay on one row. Fed piece by piece (`push`), it goes on the row it left open.
 */
class Rows {
  private open = false;
  private used = 0;
  constructor(private readonly gutter: string) {}

  push(text: VisibleText): string {
    let out = '';
    const width = columns() - this.gutter.length;
    for (const segment of text.segments) {
      const units = segment.kind === 'escape' ? [segment.text] : Array.from(graphemes.segment(segment.text), (part) => part.segment);
      for (const unit of units) {
        if (unit === '\n' || unit === '\r\n') {
          out += this.open ? '\n' : `${this.gutter.trimEnd()}\n`;
          this.open = false;
          continue;
        }
        const size = segment.kind === 'escape' ? unit.length : unit === '\t' ? 8 : /^[\x20-\x7E]$/.test(unit) ? 1 : 2 * [...unit].length;
        if (this.open && this.used + size > width) {
          out += '\n';
          this.open = false;
        }
        if (!this.open) {
          out += this.gutter;
          this.open = true;
          this.used = 0;
        }
        out += unit;
        this.used += size;
      }
    }
    return out;
  }

  /** Closes the row left open, if any. */
  end(): string {
    const out = this.open ? '\n' : '';
    this.open = false;
    return out;
  }

  /** `text` laid out whole, ending on a line of its own. */
  static of(gutter: string, text: VisibleText): string {
    const rows = new Rows(gutter);
    return rows.push(text) + rows.end();
  }
}

/**
 * Writes the model's text as it streams, escaped, in rows behind the model's gutter: nothing the model writes starts a
 * row, so it cannot pass for this example's card or prompt, and its gutter is not a card's. A piece's last character
 * waits for the next piece when it may be the first half of something (a high surrogate, a backslash before `u{`), so
 * a split is never escaped as two.
 */
function modelTextWriter(out: NodeJS.WritableStream) {
  let held = '';
  const rows = new Rows(MODEL_GUTTER);
  return {
    write(piece: string) {
      const text = held + piece;
      const keep = /[\\\uD800-\uDBFF]$/.test(text) ? 1 : 0;
      held = text.slice(text.length - keep);
      out.write(rows.push(toVisibleText(text.slice(0, text.length - keep))));
    },
    /** Ends the text so far (before a card, at the end of the run). */
    end() {
      out.write(rows.push(toVisibleText(held)) + rows.end());
      held = '';
    },
  };
}

/**
 * Why a run failed, as a model server or the network said it: behind the gutter, its line breaks escaped with the
 * rest, so what a server wrote cannot draw a card or a prompt of this example's.
 */
function runError(error: string): string {
  return Rows.of(GUTTER, toVisibleText(error, { singleLine: true }));
}

/**
 * What every card says of the names of a call its tool does not declare (or whose names could not be checked against
 * the tool's, its schema too large to read): each name marked, then the note. Read from the names the tool declared
 * when the call was put up (the tool-start's `tool.declared`); an event without them marks nothing.
 */
function undeclaredLines(call: LoopEventOf<'tool-start'>): string {
  const declared = call.tool?.declared;
  if (declared === undefined) return '';
  const shown = visibleArguments(call.toolName, call.arguments, { declared });
  const all = [...(shown.code === null ? [] : [shown.code.argument]), ...shown.others];
  const marks = all.flatMap((argument) => {
    const name = visibleTextString(argument.name);
    if (argument.undeclared) return [`⚠ ${name}: ${UNDECLARED_ARGUMENT_NOTE}\n`];
    if (argument.unchecked) return [`⚠ ${name}: ${UNCHECKED_ARGUMENT_NOTE}\n`];
    return argument.inner.map((inner) => `⚠ ${name}: ${inner.unchecked ? UNCHECKED_INNER_NOTE : UNDECLARED_INNER_NOTE} (${inner.path})\n`);
  });
  const inner = (unchecked: boolean) => shown.inner.filter((name) => name.unchecked === unchecked).map((name) => name.path);
  const undeclared = shown.undeclaredCount === 0 ? '' : `⚠ ${undeclaredArgumentsNote(shown.undeclaredCount, inner(false))}\n`;
  const unchecked = shown.uncheckedCount === 0 ? '' : `⚠ ${uncheckedArgumentsNote(shown.uncheckedCount, inner(true))}\n`;
  return `${marks.join('')}${undeclared}${unchecked}`;
}

/**
 * A call as the person is asked about it: its tool, with the MCP server it comes from (two servers may offer tools of
 * one name, told apart only by a hash), its arguments as JSON, escaped, behind the card's gutter, the names its tool
 * does not declare, and what the tool may run with that they do not show (defaults its schema declares where they
 * cannot be read), as every card says.
 */
function card(call: LoopEventOf<'tool-start'>): string {
  const json = toVisibleText(JSON.stringify(call.arguments, null, 2));
  const hidden = json.hiddenCount;
  const warning = hidden === 0 ? '' : `⚠ ${hidden} hidden character${hidden === 1 ? '' : 's'} shown as \\u{…}: what runs contains ${hidden === 1 ? 'it' : 'them'}\n`;
  const source = call.tool?.source;
  const server = source?.startsWith('mcp:') === true ? `  MCP · ${visibleTextString(toVisibleText(source.slice('mcp:'.length), { singleLine: true }))}` : '';
  const unshown = call.tool?.unshownDefaults;
  const defaults = unshown === undefined ? '' : `⚠ ${unshownDefaultsNote(unshown)}\n`;
  const asked = call.askedBecause === undefined ? '' : `⚠ Why you are asked: ${reasonText(call.askedBecause.reason)}.\n`;
  return `\n⏺ ${visible(call.toolName)}${server}\n${Rows.of(GUTTER, json)}${warning}${undeclaredLines(call)}${defaults}${asked}`;
}

/** A rule's reason on one line: the server's words as they are, a call's or a rule's words as code, free text quoted, each escaped. */
function reasonText(reason: ShownReason): string {
  return reasonParts(reason)
    .map((part) => ('text' in part ? visible(part.text) : 'code' in part ? `\`${visibleTextString(toVisibleText(part.code, { singleLine: true }))}\`` : `“${visibleTextString(toVisibleText(part.quote, { singleLine: true }))}”`))
    .join('');
}

const USAGE = 'usage: AIRLOCK_URL=<start-up link or URL> [AIRLOCK_TOKEN=… | AIRLOCK_TOKEN_FILE=…] auto-allow-read-only.ts [--ledger file] [--session id] <message>';
const { values, positionals } = (() => {
  try {
    return parseArgs({ allowPositionals: true, options: { ledger: { type: 'string' }, session: { type: 'string' } } });
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exit(2);
  }
})();
const message = positionals.join(' ').trim();
if (message === '' || process.env.AIRLOCK_URL === undefined) {
  console.error(USAGE);
  process.exit(2);
}
const guardSetting = process.env.AIRLOCK_DECISION_GUARD_MS ?? '600';
if (!/^\d+$/.test(guardSetting)) {
  console.error(`AIRLOCK_DECISION_GUARD_MS must be a whole number of milliseconds, got "${guardSetting}"`);
  process.exit(2);
}
/** How long a card is shown before an answer to it counts, in ms: `airlock chat` and the web app wait as long. */
const GUARD_MS = Number(guardSetting);
/** The address as it may be shown: its token hidden, on one line, escaped. */
const shown = (address: string) => visibleTextString(toVisibleText(shownAddress(address), { singleLine: true }));
let link: StartupLink;
try {
  link = parseStartupLink(process.env.AIRLOCK_URL);
} catch (error) {
  console.error(`AIRLOCK_URL "${shown(process.env.AIRLOCK_URL)}" is not a server address: ${shown(error instanceof Error ? error.message : String(error))}`);
  process.exit(2);
}
/**
 * The ledger file, opened before anything else (a link's one-time code spent, a run started): a path it cannot write (a
 * folder that is missing) is said now, not once a call has been decided, which then ran with no line of it written.
 */
function openLedger(path: string): number {
  try {
    return openSync(path, 'a');
  } catch (error) {
    console.error(`--ledger: cannot write ${shown(path)}: ${shown(error instanceof Error ? error.message : String(error))}`);
    process.exit(2);
  }
}
const ledgerFile = values.ledger === undefined ? undefined : openLedger(values.ledger);
/**
 * The token in the file AIRLOCK_TOKEN_FILE names, checked as `airlock chat` and the server check theirs: a file other
 * users can read is refused (whoever reads the token may allow anything), saying how to fix it.
 */
function tokenFromFile(path: string): string {
  let file: { text: string; mode: number };
  try {
    const fd = openSync(path, 'r');
    try {
      file = { mode: fstatSync(fd).mode, text: readFileSync(fd, 'utf8') };
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    console.error(`AIRLOCK_TOKEN_FILE: cannot read ${shown(path)}: ${shown(error instanceof Error ? error.message : String(error))}`);
    process.exit(2);
  }
  const mode = file.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    const quoted = /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
    console.error(`AIRLOCK_TOKEN_FILE: ${shown(path)} is open to other users (mode ${mode.toString(8).padStart(4, '0')}); make it readable by you alone: chmod 600 ${shown(quoted)}`);
    process.exit(2);
  }
  const text = file.text.trim();
  if (text === '') {
    console.error(`AIRLOCK_TOKEN_FILE: ${shown(path)} is empty`);
    process.exit(2);
  }
  return text;
}
const nonEmpty = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value);
const tokenFile = nonEmpty(process.env.AIRLOCK_TOKEN_FILE);
/** The token the link's one-time code is exchanged for; a code used already or expired is said, and the example ends. */
async function exchangedToken(address: string): Promise<string> {
  try {
    return (await resolveStartupLink(address)).token;
  } catch (error) {
    console.error(error instanceof LinkCodeError ? error.message : `cannot exchange the link's code at ${shown(address)}: ${shown(error instanceof Error ? error.message : String(error))}`);
    process.exit(1);
  }
}
const token =
  nonEmpty(process.env.AIRLOCK_TOKEN) ??
  (tokenFile === undefined ? undefined : tokenFromFile(tokenFile)) ??
  (link.token === '' && link.code !== undefined ? await exchangedToken(process.env.AIRLOCK_URL) : link.token);
const writeLedger = (entry: LedgerEntry) => {
  if (ledgerFile === undefined) process.stdout.write(ledgerLine(entry));
  else appendFileSync(ledgerFile, ledgerLine(entry));
};

/**
 * One of Airlock's own tools, read-only and on this machine. A tool that also writes, deletes or runs code is asked
 * about, and so is one that reaches beyond this machine (web_fetch): what it reads with, a URL, can carry data out.
 * So is every MCP server's tool: its hints are its server's claims, and one that says nothing of the open world is
 * open-world by the MCP specification's default.
 */
const autoAllowed = (tool: ToolInfo | undefined) =>
  tool !== undefined && tool.source === 'builtin' && tool.annotations.readOnly && !tool.annotations.destructive && !tool.annotations.executesCode && !tool.annotations.openWorld;

/**
 * Answers from stdin, each for the card that asked it. A line that comes while no card asks is dropped, and so is
 * one that comes in a card's first GUARD_MS: nothing typed before a call was shown, or before it could be read,
 * decides it. (Lines are read as they come, not kept for the next card: kept, a `y` typed ahead allowed it.)
 */
const QUESTION = 'allow? y = yes, anything else = no (what you type is the reason for the model): ';
let waiting: { approvalId: string; shownAt: number; answer: (line: string | null | typeof WITHDRAWN) => void } | undefined;
/** What a question's answer is when the call was decided elsewhere while it was asked. */
const WITHDRAWN = Symbol('withdrawn');
let inputEnded = false;
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (waiting === undefined) {
    process.stderr.write('(ignored a line typed while no call was asked)\n');
  } else if (performance.now() - waiting.shownAt < GUARD_MS) {
    process.stderr.write(`\nignored an answer typed before this call was shown: read it, then answer\n${QUESTION}`);
    waiting.shownAt = performance.now();
  } else {
    const { answer } = waiting;
    waiting = undefined;
    answer(line);
  }
});
lines.on('close', () => {
  inputEnded = true;
  waiting?.answer(null);
  waiting = undefined;
});

/** The person's choice, or undefined when the call was decided elsewhere before they answered. */
async function ask(call: LoopEventOf<'tool-start'>): Promise<Choice | undefined> {
  process.stderr.write(`${card(call)}${QUESTION}`);
  const next = inputEnded ? null : await new Promise<string | null | typeof WITHDRAWN>((answer) => (waiting = { approvalId: call.approvalId, shownAt: performance.now(), answer }));
  if (next === WITHDRAWN) return undefined;
  if (next === null) {
    process.stderr.write('\nno answer on stdin: denied\n');
    return { decision: 'deny', by: 'example', reason: 'no answer on stdin' };
  }
  // A terminal echoes the answer and its Enter; piped in, it is not shown, and the next output starts a line of its own.
  if (!process.stdin.isTTY) process.stderr.write('\n');
  const line = next.trim();
  if (line === 'y' || line === 'yes') return { decision: 'allow', by: 'person' };
  return line === '' ? { decision: 'deny', by: 'person' } : { decision: 'deny', by: 'person', reason: takenReason(line) };
}

/**
 * A reason as the server takes it: its first MAX_REASON_LENGTH characters (a character is not split in two), the
 * person told when it was cut. Sent whole, a longer one was refused, and the example ended with the call still waiting.
 */
function takenReason(line: string): string {
  if (line.length <= MAX_REASON_LENGTH) return line;
  const cut = line.slice(0, /[\uD800-\uDBFF]/.test(line.charAt(MAX_REASON_LENGTH - 1)) ? MAX_REASON_LENGTH - 1 : MAX_REASON_LENGTH).trimEnd();
  process.stderr.write(`the reason was cut to its first ${MAX_REASON_LENGTH} characters (of ${line.length}), the most the server takes\n`);
  return cut;
}

/**
 * One call put up for a decision: this example's choice and the server's answer to it, if it made one, and the
 * decision the run reported (its tool-decision event), which is the one that stood and says what ran.
 */
interface Gated {
  call: LoopEventOf<'tool-start'>;
  choice?: Choice;
  result?: ConfirmResult;
  decided?: LoopEventOf<'tool-decision'>;
  /** Why this example's decision could not be sent, or its answer is not known (the server's error, the connection's). */
  failure?: string;
  written?: true;
}

/** The ledger's account of a decision: the one that stood, and this example's as `attempted` when it did not. */
function outcome({ choice, result, decided, failure }: Gated): Pick<LedgerEntry, 'decision' | 'by' | 'source' | 'reason' | 'editedArguments' | 'status' | 'attempted'> {
  // Taken, and applied as given: an allow a deny rule refuses after all is taken ("resolved") as a deny.
  if (choice !== undefined && result?.status === 'resolved' && result.decision === choice.decision) return { ...choice, status: result.status };
  const attempted = choice === undefined ? {} : { attempted: choice };
  // Another client's decision, as the run reported it: with the arguments it edited the call to, which are what ran.
  if (decided !== undefined) {
    return {
      decision: decided.decision,
      by: 'elsewhere',
      source: decided.source,
      ...(decided.reason === undefined ? {} : { reason: decided.reason }),
      ...(decided.editedArguments === undefined ? {} : { editedArguments: decided.editedArguments }),
      status: result?.status ?? 'already-decided',
      ...attempted,
    };
  }
  // Refused, or its connection gone before the answer (it may have been applied: then the run's events say so).
  if (failure !== undefined) return { decision: null, by: null, status: `failed: ${failure}`, ...attempted };
  if (result?.status === 'already-decided' || result?.status === 'resolved') return { decision: result.decision, by: 'elsewhere', status: result.status, ...attempted };
  return { decision: null, by: null, status: result?.status ?? 'run-ended', ...attempted };
}

/** What the person is told of a decision made elsewhere: what stood, and what ran when it was edited. */
function decidedElsewhere(stood: ReturnType<typeof outcome>): string {
  const edited = stood.editedArguments === undefined ? '\n' : `, with the arguments edited to (what ran):\n${Rows.of(GUTTER, toVisibleText(JSON.stringify(stood.editedArguments, null, 2)))}`;
  return `${stood.decision ?? 'no decision known'} stood${stood.source === 'user' ? ', decided in another client' : stood.source === undefined ? '' : ` (${stood.source})`}${edited}`;
}
const airlock = createAirlockClient({ url: socketUrl(link.url), token, WebSocket, clientLabel: 'auto-allow-read-only example' });
try {
  const { tools } = await airlock.trpc.tools.list.query();
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const sessionId = values.session ?? `example_${Date.now()}`;
  // A question whose decision could not be sent ends the example: following the run stops, and the error is said.
  const following = new AbortController();
  let failed: { error: unknown; call?: LoopEventOf<'tool-start'> } | undefined;
  const run = airlock.startRun({ sessionId, message, signal: following.signal });
  const modelText = modelTextWriter(process.stderr);
  const gated = new Map<string, Gated>();
  /** Writes a call's ledger line once what stood is known: the run's decision, and the server's answer to this example's. */
  const settle = (entry: Gated, final = false) => {
    if (entry.written || (!final && (entry.decided === undefined || (entry.choice !== undefined && entry.result === undefined)))) return;
    entry.written = true;
    const stood = outcome(entry);
    if (stood.by === 'elsewhere' || stood.by === null) {
      process.stderr.write(entry.choice === undefined ? `\n⏺ ${visible(entry.call.toolName)}: ` : stood.status === 'resolved' ? 'taken, but not as given: ' : `not taken (${visible(stood.status)}): `);
      process.stderr.write(decidedElsewhere(stood));
    }
    writeLedger({ at: new Date().toISOString(), sessionId, runId: run.runId, toolName: entry.call.toolName, arguments: entry.call.arguments, ...stood });
  };
  const decideCall = async (entry: Gated) => {
    // Decided in another client before its turn here: not asked about.
    if (entry.decided !== undefined) return settle(entry);
    const { call } = entry;
    // A call a deny rule asked about (it could not tell whether it catches it) is the person's to decide, read-only or not.
    const readOnly = autoAllowed(byName.get(call.toolName)) && call.exactGrantsOnly !== true;
    const choice = readOnly ? ({ decision: 'allow', by: 'read-only rule' } as const) : await ask(call);
    if (choice === undefined) return settle(entry);
    entry.choice = choice;
    const input: DecideInput =
      choice.decision === 'allow'
        ? { sessionId, approvalId: call.approvalId, decision: 'allow' }
        : { sessionId, approvalId: call.approvalId, decision: 'deny', reason: choice.reason };
    try {
      entry.result = await airlock.decide(input);
    } catch (error) {
      // Logged as it stands: this example's decision, not taken (or not known to be); then the example ends.
      entry.failure = error instanceof Error ? error.message : String(error);
      settle(entry, true);
      failed ??= { error, call };
      following.abort();
      return;
    }
    settle(entry);
  };
  // The run's events are read as they come, and its calls asked about one at a time, in order: a decision made in
  // another client on the call being asked withdraws the question.
  let questions = Promise.resolve();
  for await (const event of run) {
    if (event.type === 'text-delta') modelText.write(event.text);
    if (event.type === 'run-end') {
      // Every call was decided before the run ended; a question still open has nothing left to decide.
      waiting?.answer(WITHDRAWN);
      waiting = undefined;
      await questions;
      modelText.end();
      process.stderr.write(`[run ${visible(event.reason)}]\n${event.error === undefined ? '' : runError(event.error)}`);
    }
    if (event.type === 'tool-decision') {
      const entry = gated.get(event.approvalId);
      if (entry === undefined || entry.decided !== undefined) continue;
      entry.decided = event;
      if (entry.choice === undefined && waiting?.approvalId === event.approvalId) {
        const { answer } = waiting;
        waiting = undefined;
        process.stderr.write('\n');
        answer(WITHDRAWN);
      } else if (entry.choice !== undefined) settle(entry);
    }
    if (event.type !== 'tool-start' || !event.awaitingConfirmation) continue;
    modelText.end();
    const entry: Gated = { call: event };
    gated.set(event.approvalId, entry);
    questions = questions.then(() => decideCall(entry)).catch((error: unknown) => {
      failed ??= { error };
      following.abort();
    });
  }
  await questions;
  if (failed?.call !== undefined) {
    // Said on one line; the ledger has the decision and why it failed. The calls after it were not decided here.
    console.error(`the decision on ${visible(failed.call.toolName)} failed: ${shown(failed.error instanceof Error ? failed.error.message : String(failed.error))}`);
    process.exitCode = 1;
  } else if (failed !== undefined) throw failed.error;
  else for (const entry of gated.values()) settle(entry, true);
} catch (error) {
  // The server refused the token, could not be reached, or refused the run (a chat id it does not take, a message
  // over its limit, too many runs): said on one line, not as a stack trace.
  const refused = serverCode(error) !== undefined;
  if (airlock.state !== 'rejected' && airlock.state !== 'unreachable' && !refused) throw error;
  const why = shown(error instanceof Error ? error.message : String(error));
  console.error(
    airlock.state === 'rejected'
      ? `the server at ${shown(link.url)} refused the token (${why}): check AIRLOCK_TOKEN, AIRLOCK_TOKEN_FILE or the link's #token= (a server started without a fixed token has a new one each start)`
      : refused
        ? `the run was refused: ${why}`
        : why,
  );
  process.exitCode = 1;
} finally {
  await airlock.close();
  lines.close();
  process.stdin.destroy();
}
