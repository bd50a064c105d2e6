import type { BrowserContext, Locator, Page } from 'playwright-core';

/**
 * How long a page waits for what a person would see. Generous, as it only bounds a hang: a loaded machine (two suites
 * at once on two cores) has kept a card from showing for over 10 s.
 */
export const PAGE_TIMEOUT_MS = 25_000;

/** A tab of the Airlock UI, with the few moves a person makes. */
export class ChatPage {
  constructor(readonly page: Page) {}

  static async open(context: BrowserContext, link: string): Promise<ChatPage> {
    const page = await context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await page.goto(link);
    const chat = new ChatPage(page);
    await chat.connected();
    return chat;
  }

  async connected(): Promise<void> {
    await this.page.getByRole('status', { name: 'Connection: Connected' }).waitFor();
  }

  async send(message: string): Promise<void> {
    const box = this.page.getByRole('textbox', { name: 'Message' });
    await box.fill(message);
    await box.press('Enter');
  }

  /** The nth tool card (0-based) in the transcript. */
  card(index = 0): Locator {
    return this.page.getByRole('article').nth(index);
  }

  /** `timeout`: for a wait inside a retried step, shorter than the page's default, so the step can be tried again. */
  async waitForStatus(card: Locator, label: string, options: { timeout?: number } = {}): Promise<void> {
    try {
      await card.getByTestId('tool-status').getByText(label, { exact: true }).waitFor(options);
    } catch (error) {
      // What the page showed instead, so that a failure says whether the card was missing, in another state, or the
      // run stopped elsewhere.
      const shown = await this.page.locator('main').innerText({ timeout: 2_000 }).catch((reason: unknown) => `(unreadable: ${String(reason)})`);
      const statuses = await this.page.getByTestId('tool-status').allInnerTexts().catch(() => []);
      throw new Error(`${(error as Error).message}\nTool statuses on the page: ${JSON.stringify(statuses)}\nThe page's main text:\n${shown.slice(0, 4_000)}`, { cause: error });
    }
  }

  /**
   * A button of the card, found once it is armed: a decision button looks off for a moment after it appears or moves
   * (data-arming), and a person waits for it. A click started meanwhile is retried by the driver, which scrolls the
   * button to the end, centre or start of its scroller on each retry: a move no person makes.
   */
  button(card: Locator, name: string): Locator {
    return card.getByRole('button', { name, exact: true }).and(this.page.locator(':not([data-arming])'));
  }

  async waitForText(text: string, options: { timeout?: number } = {}): Promise<void> {
    await this.page.getByText(text, { exact: false }).first().waitFor(options);
  }

  async openSession(title: string): Promise<void> {
    await this.page.getByRole('navigation', { name: 'Chats' }).locator('.session-button', { hasText: title }).click();
  }
}
