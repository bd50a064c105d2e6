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
  /** Of those, the calls first seen while the tab was in front. */
  private readonly seenInFront = new Set<string>();
  /** Calls this tab put on screen, with how many times. */
  private readonly shows = new Map<string, number>();
  /** Calls whose notification the person clicked or dismissed, in any tab. */
  private readonly ended = new Set<string>();
  /** Listed tags of calls this tab never saw waiting, that it asked the server about (see `unheardOf`). */
  private readonly asked = new Set<string>();

  /**
   * Notes the waiting calls without showing anything: notifications are off, or not allowed. Those still waiting
   * once they are on are shown as the tab is hidden, as a call first seen while the tab was visible is.
   */
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
   * One pass against the latest waiting list and the notifications the browser lists. While the tab is hidden, a
   * waiting call it has not shown yet is shown, once, whenever it was first seen: a call put up while the person
   * looked at the tab, still waiting when they switch away, is told then. Not one the browser lists already (another
   * tab showed it) or whose notification the person clicked or dismissed. What the pass shows is counted as shown.
   * `listed` is null where the browser cannot list notifications: then nothing is closed or shown again.
   * `appInView`: another window of the app is visible. A call seen in front is then not told yet: the person switched
   * to another tab of the app, whose Waiting for you lists it; it is told once no window of the app is in view.
   */
  pass<Approval extends { approvalId: string }>(waiting: readonly Approval[], listed: ReadonlySet<string> | null, hidden: boolean, appInView = false): NotificationPass<Approval> {
    const waitingIds = new Set(waiting.map((approval) => approval.approvalId));
    const onScreen = listed ?? new Set<string>();
    const close = [...onScreen].filter((tag) => this.seen.has(tag) && !waitingIds.has(tag));
    const show: Approval[] = [];
    for (const approval of waiting) {
      const id = approval.approvalId;
      const shows = this.shows.get(id) ?? 0;
      const untold = shows === 0 && !onScreen.has(id);
      const lost = listed !== null && shows > 0 && shows < MAX_SHOWS && !onScreen.has(id);
      if (!this.seen.has(id) && !hidden) this.seenInFront.add(id);
      this.seen.add(id);
      if (!hidden || this.ended.has(id) || !(untold || lost)) continue;
      if (untold && appInView && this.seenInFront.has(id)) continue;
      show.push(approval);
      this.shows.set(id, shows + 1);
    }
    for (const id of this.seen) if (!waitingIds.has(id) && !onScreen.has(id)) this.forget(id);
    return { close, show };
  }

  /**
   * Tags the browser lists that this tab has not seen waiting and has not asked about yet: another tab's, or left on
   * screen by a tab that ended (closed without `pagehide`, or before its call was decided). Each is asked about once
   * while it stays listed: the caller reads its call's chat, and closes it if the call waits no more. Call after `pass`.
   */
  unheardOf(listed: ReadonlySet<string>): string[] {
    for (const tag of this.asked) if (!listed.has(tag)) this.asked.delete(tag);
    const unheard = [...listed].filter((tag) => !this.seen.has(tag) && !this.asked.has(tag));
    for (const tag of unheard) this.asked.add(tag);
    return unheard;
  }

  /** The calls this tab put on screen, to close as the tab goes. */
  shown(): string[] {
    return [...this.shows.keys()];
  }

  private forget(id: string): void {
    this.seen.delete(id);
    this.seenInFront.delete(id);
    this.shows.delete(id);
    this.ended.delete(id);
  }
}
