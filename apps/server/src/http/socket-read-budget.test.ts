import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { manualClock } from '../mcp/fixtures/manual-clock';
import { budgetReads, DEFAULT_READ_BUDGET, SocketReads } from './socket-read-budget';

/** A WebSocket as the budget sees it: its message listeners, and whether it is read. */
class FakeClient extends EventEmitter {
  paused = false;
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
}

describe('SocketReads', () => {
  it('reads the socket only while nothing holds it: one reason letting go does not resume it for another', () => {
    const client = new FakeClient();
    const reads = new SocketReads(client);
    reads.hold('send window');
    reads.hold('read budget');
    reads.release('send window');
    expect(client.paused).toBe(true);
    // Let go of twice, or never held: nothing changes.
    reads.release('send window');
    expect(client.paused).toBe(true);
    reads.release('read budget');
    expect(client.paused).toBe(false);
  });
});

describe('budgetReads', () => {
  it('hands messages on until the budget is overspent, then pauses the socket and holds what it had taken in, handing it on in order as the budget refills', () => {
    const clock = manualClock();
    const client = new FakeClient();
    const handed: string[] = [];
    client.on('message', (data: Buffer) => handed.push(data.toString()));
    const reads = new SocketReads(client);
    budgetReads(client as unknown as WebSocket, reads, { burstBytes: 25, bytesPerSecond: 10 }, clock);
    const send = (text: string) => client.emit('message', Buffer.from(text), false);

    send('a'.repeat(10));
    send('b'.repeat(10));
    expect([handed.length, client.paused]).toStrictEqual([2, false]);
    // Over by 10: handed on, and the socket is not read until the 10 are paid (a second).
    send('c'.repeat(15));
    expect([handed.length, client.paused]).toStrictEqual([3, true]);
    // Taken in before the pause held: it waits.
    send('d'.repeat(10));
    clock.advance(999);
    expect([handed.length, client.paused]).toStrictEqual([3, true]);
    clock.advance(1);
    expect(handed).toStrictEqual(['a'.repeat(10), 'b'.repeat(10), 'c'.repeat(15), 'd'.repeat(10)]);
    // Now 10 are owed: still not read for a second.
    expect(client.paused).toBe(true);
    clock.advance(1000);
    expect(client.paused).toBe(false);
  });

  it('charges each message its own cost besides its bytes, so empty messages spend the budget too (found in review)', () => {
    const clock = manualClock();
    const client = new FakeClient();
    let handed = 0;
    client.on('message', () => handed++);
    budgetReads(client as unknown as WebSocket, new SocketReads(client), { burstBytes: 1000, bytesPerSecond: 100, messageBytes: 100 }, clock);
    for (let sent = 0; sent < 20; sent++) client.emit('message', Buffer.alloc(0), false);
    // Ten spend the burst; the eleventh overspends it and the socket is not read. Before, all twenty went on, unpaused.
    expect([handed, client.paused]).toStrictEqual([11, true]);
    // Each second pays for one more, as for a message of 100 bytes.
    clock.advance(999);
    expect(handed).toBe(11);
    clock.advance(1);
    expect([handed, client.paused]).toStrictEqual([12, true]);
    clock.advance(1000);
    expect(handed).toBe(13);
  });

  it('charges pings and pongs as messages, so a socket sending them back to back stops being read; a message after them waits its turn (found in review)', () => {
    const clock = manualClock();
    const client = new FakeClient();
    let handed = 0;
    client.on('message', () => handed++);
    budgetReads(client as unknown as WebSocket, new SocketReads(client), { burstBytes: 1000, bytesPerSecond: 100, messageBytes: 100 }, clock);
    for (let sent = 0; sent < 10; sent++) client.emit(sent % 2 === 0 ? 'ping' : 'pong', Buffer.alloc(0));
    expect(client.paused).toBe(false);
    // The eleventh overspends the burst: the socket is not read. Before, pings and pongs cost nothing, read without end.
    client.emit('ping', Buffer.alloc(0));
    expect(client.paused).toBe(true);
    client.emit('message', Buffer.from('after'), false);
    expect(handed).toBe(0);
    clock.advance(1000);
    expect([handed, client.paused]).toStrictEqual([1, true]);
  });

  it('the server\'s budget counts a cost for each message', () => {
    expect(DEFAULT_READ_BUDGET.messageBytes).toBe(256);
  });

  it('forgets what it held when the socket closes', () => {
    const clock = manualClock();
    const client = new FakeClient();
    const handed: string[] = [];
    client.on('message', (data: Buffer) => handed.push(data.toString()));
    budgetReads(client as unknown as WebSocket, new SocketReads(client), { burstBytes: 1, bytesPerSecond: 1 }, clock);
    client.emit('message', Buffer.from('ab'), false);
    client.emit('message', Buffer.from('cd'), false);
    client.emit('close');
    clock.advance(10_000);
    expect(handed).toStrictEqual(['ab']);
  });
});
