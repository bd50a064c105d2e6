import type { ChatItem } from './chat-reducer';
import type { AskedBecause, ToolCallView } from './tool-call-state';

/**
 * The waiting calls of a chat that a deny rule, added or changed after they were put up, could not tell from calls it
 * denies, by approval id: only a grant for their exact arguments releases them, and why is `askedBecause` (absent
 * when the server did not keep it). From the chat's waiting list: their tool-start was sent before the rule, without
 * the mark.
 */
export type AskedLater = ReadonlyMap<string, AskedBecause | undefined>;

/**
 * The chat's items with each undecided call of `asked` marked as its tool-start would have marked it, put up under
 * the rule: its card says why it is asked, and the bar's Allow all leaves it (see PendingBar). The same array when
 * none changes, so nothing is drawn again.
 */
export function markAskedLater(items: ChatItem[], asked: AskedLater): ChatItem[] {
  if (asked.size === 0) return items;
  let marked: ChatItem[] | undefined;
  items.forEach((item, index) => {
    const approvalId = item.kind === 'tool' ? undecidedId(item.call) : undefined;
    if (item.kind !== 'tool' || approvalId === undefined || item.call.exactGrantsOnly === true || !asked.has(approvalId)) return;
    const because = asked.get(approvalId);
    const call: ToolCallView = { ...item.call, exactGrantsOnly: true, ...(item.call.askedBecause === undefined && because !== undefined ? { askedBecause: because } : {}) };
    (marked ??= [...items])[index] = { ...item, call };
  });
  return marked ?? items;
}

/** The approval id of a call still to be decided; undefined once it is. */
function undecidedId(call: ToolCallView): string | undefined {
  return call.state.status === 'awaiting-decision' || call.state.status === 'deciding' ? call.state.approvalId : undefined;
}
