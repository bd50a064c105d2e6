import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { startAirlockUnderTest, type AirlockUnderTest, type AirlockUnderTestOptions } from './airlock-under-test';
import { launchChromium } from './browser';

export interface BrowserSuite {
  /** One Chromium for the whole file. */
  readonly browser: Browser;
  /** A fresh server, fake model and workspace for each test. */
  readonly airlock: AirlockUnderTest;
  /** A fresh browser context (no storage shared between tests) for each test. */
  readonly context: BrowserContext;
}

/**
 * Registers the hooks every browser test file needs and gives the test its browser, server and context.
 * `options` apply to the server started for each test.
 */
export function useBrowserSuite(options: AirlockUnderTestOptions = {}): BrowserSuite {
  const state: { browser?: Browser; airlock?: AirlockUnderTest; context?: BrowserContext } = {};
  beforeAll(async () => {
    state.browser = await launchChromium();
  });
  afterAll(async () => {
    await state.browser?.close();
  });
  beforeEach(async () => {
    state.airlock = await startAirlockUnderTest(options);
    state.context = await state.browser!.newContext({ viewport: { width: 1280, height: 800 } });
  });
  afterEach(async () => {
    await state.context?.close();
    await state.airlock?.close();
  });
  return {
    get browser() {
      return state.browser!;
    },
    get airlock() {
      return state.airlock!;
    },
    get context() {
      return state.context!;
    },
  };
}
