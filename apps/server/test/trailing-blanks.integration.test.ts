import { blankPieces, blankRunsNote, blankRunsOfArguments, textSegments, visibleArguments, type VisibleText } from '@airlock/core';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../src/tools';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { startTestAirlock, watchRun } from './support/test-airlock';

/** A value's lines as every client's card draws them: blanks at a line's end, tabs and long runs as their markers. */
function drawnLines(value: VisibleText): string[] {
  const places = new Map(textSegments(value).map((found) => [found.at, found.place]));
  const drawn = value.segments.map((segment, at) => (segment.kind === 'text' ? blankPieces(segment.text, places.get(at)).map((piece) => piece.text).join('') : segment.text));
  return drawn.join('').split('\n');
}

describe('a terminal command whose line ends in a backslash and a space', () => {
  it('reaches the card as the model wrote it, the space drawn as ␠ and the card warning that the line does not continue', async () => {
    const workspace = await mkdtemp(path.join(tmpdir(), 'airlock-blanks-'));
    await using _cleanup = { [Symbol.asyncDispose]: () => rm(workspace, { recursive: true, force: true }) };
    await mkdir(path.join(workspace, 'victim'));
    // Bash reads `\␠` as an escaped space, not a continuation: the first line ends there, and `rm -rf` runs on its own.
    const command = 'echo "Cleanup plan, printed only:" \\ \n  rm -rf victim \\\n  && echo "(nothing was deleted)"';
    await using fake = await startFakeOpenAIServer();
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: createBuiltinTools({ workspace, sandbox: 'none' }) });
    fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command } }] }, { text: 'Not run.' });
    const run = watchRun(airlock.connect(), { sessionId: 's-blanks', runId: 'run-blanks', message: 'plan a clean-up' });
    const start = await run.next('tool-start');
    expect(start).toMatchObject({ toolName: 'terminal', arguments: { command }, awaitingConfirmation: true });

    const shown = visibleArguments(start.toolName, start.arguments);
    expect(drawnLines(shown.code!.argument.value)).toStrictEqual(['echo "Cleanup plan, printed only:" \\␠', '  rm -rf victim \\', '  && echo "(nothing was deleted)"']);
    const runs = blankRunsOfArguments(shown);
    expect(runs).toStrictEqual({ folded: 0, edges: 1, afterBackslash: 1 });
    expect(blankRunsNote(runs)).toContain('A line ends in a backslash followed by spaces or tabs: that backslash does not continue the line');

    await airlock.connect().trpc.chat.confirmTool.mutate({ sessionId: 's-blanks', approvalId: start.approvalId, decision: 'deny' });
    expect(await run.ended).toMatchObject({ reason: 'done' });
    expect((await stat(path.join(workspace, 'victim'))).isDirectory()).toBe(true);
  });
});
