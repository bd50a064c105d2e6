// The client example in the README ("Client package"), word for word: here it is type-checked with the examples,
// and auto-allow-read-only.test.ts checks that the README still shows this very code.

import { createAirlockClient, resolveStartupLink, toVisibleText, visibleArguments, visibleTextString } from '@airlock/client';
import { WebSocket } from 'ws'; // Node 20 has no global WebSocket; browsers need no option

// What a model or a tool wrote, with hidden, bidi and control characters as \u{…} escapes: never print it raw.
const visible = (text: string) => visibleTextString(toVisibleText(text));
const { url, token } = await resolveStartupLink('http://airlock-….localhost:7700/#code=…'); // exchanges the code once; *.localhost: connects to 127.0.0.1
const airlock = createAirlockClient({ url, token, WebSocket });
const run = airlock.startRun({ sessionId: 'demo', message: 'list the files' });
for await (const event of run) {
  if (event.type === 'text-delta') process.stdout.write(visible(event.text));
  if (event.type === 'tool-start' && event.awaitingConfirmation) {
    const { code, others } = visibleArguments(event.toolName, event.arguments);
    const shown = [...(code === null ? [] : [code.argument]), ...others].map((arg) => `${visibleTextString(arg.name)}: ${visibleTextString(arg.value)}`);
    console.log(`\n${visibleTextString(toVisibleText(event.toolName, { singleLine: true }))} ${shown.join(', ')}`);
    await airlock.decide({ sessionId: 'demo', approvalId: event.approvalId, decision: 'deny', reason: 'not now' });
  }
}
await airlock.close();
