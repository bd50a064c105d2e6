/** How many times one tab puts the same call on screen, the first time included. */
export const MAX_SHOWS = 3;

export interface NotificationPass<Approval extends { approvalId: string }> {
  /** Tags of notifications to close: calls this tab saw waiting that wait no more. */
  close: string[];
  /** Calls to put on screen, in the order they wait. */
  show: Approval[];
}

/**
 * What one tab knows of the decision notifications it has to do with, and what each pass over the waiting list
 * should close and show.
 *
 * Notifications are shared by every tab of the app, and the list of them a tab can read is the browser's record, not
 * the screen: Chromium drops a notification from that record when some tab reads the list in the moment between the
 * notification's being recorded and its being displayed. So a call this tab showed, that still waits, and that the
 * person neither clicked nor dismissed, is shown again when it is missing (up to `MAX_SHOWS` times in all).
 */
export class NotificationBook {
  /** Calls this tab has seen waiting, while they wait or have a notification to close. */
  private readonly seen = new Set<string>();
  /** Calls this tab put on screen, with how many times. */
  private readonly shows = new Map<string, number>();
  /** Calls whose notification the person clicked or dismissed, in any tab. */
  private readonly ended = new Set<string>();

  /** Notes the waiting calls without showing anything: notifications are off, or not allowed. */
  see(waiting: readonly { approvalId: string }[]): void {
    const waitingIds = new Set(waiting.map((approval) => approval.approvalId));
    for (const id of waitingIds) this.seen.add(id);
    for (const id of this.seen) if (!waitingIds.has(id) && !this.shows.has(id)) this.forget(id);
  }

  /** The person clicked or dismissed the call's notification: it is not shown again. */
  end(approvalId: string): void {
    if (this.seen.has(approvalId)) this.ended.add(approvalId);
  }

  /**
   * One pass against the latest waiting list and the notifications the browser lists. A call first seen while the
   * tab is hidden is shown; one first seen while it is visible never is. What the pass shows is counted as shown.
   * `listed` is null where the browser cannot list notifications: then nothing is closed or shown again.
   */
  pass<Approval extends { approvalId: string }>(waiting: readonly Approval[], listed: ReadonlySet<string> | null, hidden: boolean): NotificationPass<Approval> {
    const waitingIds = new Set(waiting.map((approval) => approval.approvalId));
    const onScreen = listed ?? new Set<string>();
    const close = [...onScreen].filter((tag) => this.seen.has(tag) && !waitingIds.has(tag));
    const show: Approval[] = [];
    for (const approval of waiting) {
      const id = approval.approvalId;
      const shows = this.shows.get(id) ?? 0;
      const fresh = !this.seen.has(id);
      const lost = listed !== null && shows > 0 && shows < MAX_SHOWS && !onScreen.has(id) && !this.ended.has(id);
      this.seen.add(id);
      if (!hidden || !(fresh || lost)) continue;
      show.push(approval);
      this.shows.set(id, shows + 1);
    }
    for (const id of this.seen) if (!waitingIds.has(id) && !onScreen.has(id)) this.forget(id);
    return { close, show };
  }

  private forget(id: string): void {
    this.seen.delete(id);
    this.shows.delete(id);
    this.ended.delete(id);
  }
}
