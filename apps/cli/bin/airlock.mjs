#!/usr/bin/env node
// Runs the TypeScript client in this process through tsx's loader (Node 20 cannot run .ts itself).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
