#!/usr/bin/env node
// Runs the TypeScript client in this process through tsx's loader (Node 20 cannot run .ts itself).
import { refuseInspectorSignal } from '@airlock/core/inspector-signal';
import { register } from 'tsx/esm/api';

// Node opens its inspector to any same-user process that sends SIGUSR1 (a tool outside the server's sandbox, say),
// which could read the token from this client's heap.
refuseInspectorSignal({ notice: 'airlock: received SIGUSR1: ignored, the inspector stays closed (NODE_OPTIONS=--inspect-port=… to debug)' });

register();
await import('../src/main.ts');
