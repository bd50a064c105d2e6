import { toolCallStep } from '@airlock/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { mcpToolCalls } from './support/mcp-chat';
import { ended, waitingCall } from './support/always-allow';

// A real stdio MCP server declares defaults in its tool's input schema and acts on them when an argument is left out:
// the card must hold those values, and the server must get them as shown.

vi.setConfig({ testTimeout: 60_000 });

const { chatWith } = mcpToolCalls('ops', 'defaults');

describe('a call to an MCP tool that leaves out arguments its schema gives defaults', () => {
  it('is put up with the defaults filled in, and the server gets exactly the arguments shown', async () => {
    const chat = await chatWith(toolCallStep({ name: 'ops__deploy', arguments: {} }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'deploy' });
    const waiting = await waitingCall(chat, 's');
    const shown = { environment: 'production', dry_run: false };
    expect(waiting.arguments).toStrictEqual(shown);
    await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' });
    await ended(chat, 's');
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(call).toMatchObject({ decision: 'allow', outcome: 'executed', arguments: shown });
    expect(JSON.parse(call!.result!)).toStrictEqual({ received: shown, actedOn: shown });
  });

  it('fills the defaults inside an object argument the call gives, and keeps every value the model gave', async () => {
    const chat = await chatWith(toolCallStep({ name: 'ops__deploy', arguments: { environment: 'staging', options: { note: 'x' } } }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'deploy' });
    const waiting = await waitingCall(chat, 's');
    const shown = { environment: 'staging', dry_run: false, options: { note: 'x', force: true } };
    expect(waiting.arguments).toStrictEqual(shown);
    await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' });
    await ended(chat, 's');
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(JSON.parse(call!.result!)).toStrictEqual({ received: shown, actedOn: shown });
  });

  it('fills the defaults a generated schema declares behind references, in each item of an array and in the one union branch that fits', async () => {
    const given = { target: { kind: 'cluster' }, steps: [{ name: 'migrate' }, { name: 'restart', skip_checks: false }] };
    const chat = await chatWith(toolCallStep({ name: 'ops__release', arguments: given }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'release' });
    const waiting = await waitingCall(chat, 's');
    const shown = { target: { kind: 'cluster', environment: 'production' }, steps: [{ name: 'migrate', skip_checks: true }, { name: 'restart', skip_checks: false }] };
    expect(waiting.arguments).toStrictEqual(shown);
    await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' });
    await ended(chat, 's');
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(call).toMatchObject({ decision: 'allow', outcome: 'executed', arguments: shown });
    expect(JSON.parse(call!.result!)).toStrictEqual({ received: shown, actedOn: shown });
  });

  it('fills the defaults inside an object argument whose own default it filled in, so the card shows what the server acts on', async () => {
    const chat = await chatWith(toolCallStep({ name: 'ops__configure', arguments: { target: 'prod' } }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'configure' });
    const waiting = await waitingCall(chat, 's');
    const shown = { target: 'prod', options: { force: true, dry_run: false } };
    expect(waiting.arguments).toStrictEqual(shown);
    await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' });
    await ended(chat, 's');
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(JSON.parse(call!.result!)).toStrictEqual({ received: shown, actedOn: shown });
  });

  it("refuses a person's edit that leaves out an argument with a default, naming it, and runs one that gives it", async () => {
    const chat = await chatWith(toolCallStep({ name: 'ops__deploy', arguments: {} }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'deploy' });
    const waiting = await waitingCall(chat, 's');
    const decide = (args: Record<string, unknown>) => chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow', arguments: args });
    await expect(decide({ environment: 'staging' })).rejects.toThrow('dry_run: left out, so the tool would use its default false; give the value it should run with');
    expect(chat.pending('s')).toHaveLength(1);
    await decide({ environment: 'staging', dry_run: true });
    await ended(chat, 's');
    const [call] = (await chat.getSession('s')).toolCalls;
    const ran = { environment: 'staging', dry_run: true };
    expect(call).toMatchObject({ decision: 'allow', editedArguments: ran });
    expect(JSON.parse(call!.result!.split('\n\n')[1]!)).toStrictEqual({ received: ran, actedOn: ran });
  });

  it('says, on the call put up and in the ledger, that the tool may run on a default the card does not show when several union branches fit', async () => {
    const chat = await chatWith(toolCallStep({ name: 'ops__notify', arguments: { to: '#ops@example.test' } }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'notify' });
    const waiting = await waitingCall(chat, 's');
    expect(waiting.arguments).toStrictEqual({ to: '#ops@example.test' });
    expect(waiting.tool?.unshownDefaults).toStrictEqual(['ambiguous']);
    await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' });
    await ended(chat, 's');
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(call?.tool?.unshownDefaults).toStrictEqual(['ambiguous']);
    // The server ran on a default nobody saw: what the card says it may.
    expect(JSON.parse(call!.result!)).toStrictEqual({ received: { to: '#ops@example.test' }, actedOn: { urgent: true, to: '#ops@example.test' } });
  });

  it('says nothing of the kind when the call gives what the branches default', async () => {
    const chat = await chatWith(toolCallStep({ name: 'ops__notify', arguments: { to: '#ops@example.test', urgent: false } }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'notify' });
    const waiting = await waitingCall(chat, 's');
    expect(waiting.tool).toBeDefined();
    expect(waiting.tool?.unshownDefaults).toBeUndefined();
  });
});

describe('a call to an MCP tool whose schema declares an argument behind a $ref', () => {
  it('is put up with the names the reference declares, which the card checks the argument against', async () => {
    const chat = await chatWith(toolCallStep({ name: 'ops__schedule', arguments: { job: { name: 'backup', at: 'noon' } } }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'schedule' });
    const waiting = await waitingCall(chat, 's');
    expect(waiting.tool?.declared).toStrictEqual({ names: [{ name: 'job', inner: { names: [{ name: 'name' }, { name: 'at' }] } }] });
  });
});
