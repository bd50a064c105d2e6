// Measures the approval registry alone: registering, holding and resolving many pending approvals.
// Run: pnpm --filter @airlock/core bench   (uses --expose-gc for the memory figure)
import { ApprovalRegistry } from '../src/approval-registry';

const gc = (globalThis as { gc?: () => void }).gc;

function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

async function round(n: number) {
  const registry = new ApprovalRegistry();
  const before = heapUsed();
  const t0 = performance.now();
  const tickets = Array.from({ length: n }, (_, i) =>
    registry.register({
      sessionId: `s${i}`,
      runId: `run${i}`,
      toolCallId: `call${i}`,
      toolName: 'terminal',
      arguments: { command: `echo ${i}` },
      executesCode: true,
      toolVersion: 'v1',
    }),
  );
  const waits = tickets.map((ticket) => ticket.wait());
  const registered = performance.now() - t0;
  const perPending = (heapUsed() - before) / n;
  const t1 = performance.now();
  tickets.forEach((ticket, i) => registry.resolve(ticket.approvalId, i % 2 ? 'allow' : 'deny', { sessionId: `s${i}` }));
  const outcomes = await Promise.all(waits);
  const drained = performance.now() - t1;
  const misrouted = outcomes.filter((o, i) => o.decision !== (i % 2 ? 'allow' : 'deny')).length;
  return { n, registered, drained, perPending, misrouted };
}

const rows = [];
for (const n of [1, 1_000, 10_000, 100_000]) rows.push(await round(n));
console.log(`node ${process.version}, gc ${gc ? 'exposed' : 'not exposed (memory figure is noisy)'}`);
console.log('| pending | register all (ms) | resolve + drain all (ms) | heap per pending (bytes) | misrouted |');
console.log('|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.n.toLocaleString('en')} | ${r.registered.toFixed(2)} | ${r.drained.toFixed(2)} | ${r.n >= 1000 ? Math.round(r.perPending) : '–'} | ${r.misrouted} |`);
}
