import { describe, expect, it } from 'vitest';
import { MAX_SHOWS, NotificationBook } from './notification-book';

const call = (approvalId: string) => ({ approvalId });
const ids = (approvals: readonly { approvalId: string }[]) => approvals.map((approval) => approval.approvalId);
const tags = (...values: string[]) => new Set(values);

describe('NotificationBook', () => {
  it('shows each call that starts waiting while the tab is hidden, once', () => {
    const book = new NotificationBook();
    expect(ids(book.pass([call('a')], tags(), true).show)).toStrictEqual(['a']);
    expect(book.pass([call('a'), call('b')], tags('a'), true)).toStrictEqual({ close: [], show: [call('b')] });
    expect(book.pass([call('a'), call('b')], tags('a', 'b'), true)).toStrictEqual({ close: [], show: [] });
  });

  it('shows a call first seen while the tab was visible once the tab is hidden while it still waits, once', () => {
    const book = new NotificationBook();
    expect(book.pass([call('a')], tags(), false).show).toStrictEqual([]);
    expect(book.pass([call('a')], tags(), false).show).toStrictEqual([]);
    expect(book.pass([call('a')], tags(), true).show).toStrictEqual([call('a')]);
    // Back in front and away again: told already, and still on screen.
    expect(book.pass([call('a')], tags('a'), false).show).toStrictEqual([]);
    expect(book.pass([call('a')], tags('a'), true).show).toStrictEqual([]);
  });

  it('holds a call seen while visible, as the tab is hidden, while another window of the app is in view; not one first seen hidden', () => {
    const book = new NotificationBook();
    book.pass([call('a')], tags(), false);
    expect(book.pass([call('a')], tags(), true, true).show).toStrictEqual([]);
    expect(book.pass([call('a'), call('b')], tags(), true, true).show).toStrictEqual([call('b')]);
    expect(book.pass([call('a'), call('b')], tags('b'), true, false).show).toStrictEqual([call('a')]);
  });

  it('does not show, as the tab is hidden, a call seen while visible that waits no more, or whose notification another tab shows', () => {
    const book = new NotificationBook();
    book.pass([call('a'), call('b')], tags(), false);
    expect(book.pass([call('b')], tags('b'), true).show).toStrictEqual([]);
  });

  it('does not show, as the tab is hidden, a call seen while visible whose notification the person dismissed in another tab', () => {
    const book = new NotificationBook();
    book.pass([call('a')], tags(), false);
    book.end('a');
    expect(book.pass([call('a')], tags(), true).show).toStrictEqual([]);
  });

  it('closes the notification of a call it saw once the call waits no more, and only those', () => {
    const book = new NotificationBook();
    book.pass([call('a')], tags(), true);
    expect(book.pass([], tags('a', 'from-another-tab'), true).close).toStrictEqual(['a']);
  });

  it('shows again a call of its own the browser no longer lists, while it waits, up to a bound', () => {
    const book = new NotificationBook();
    const shows: string[][] = [];
    for (let pass = 0; pass < MAX_SHOWS + 2; pass++) shows.push(ids(book.pass([call('a')], tags(), true).show));
    expect(shows).toStrictEqual([...Array.from({ length: MAX_SHOWS }, () => ['a']), [], []]);
  });

  it('does not show again a call whose notification the person clicked or dismissed', () => {
    const book = new NotificationBook();
    book.pass([call('a'), call('b')], tags(), true);
    book.end('a');
    expect(ids(book.pass([call('a'), call('b')], tags(), true).show)).toStrictEqual(['b']);
  });

  it('shows again a call that dropped out of the list for a moment and came back', () => {
    const book = new NotificationBook();
    book.pass([call('a')], tags(), true);
    expect(book.pass([], tags('a'), true).close).toStrictEqual(['a']);
    expect(ids(book.pass([call('a')], tags(), true).show)).toStrictEqual(['a']);
  });

  it('closes nothing and shows nothing again where the browser cannot list notifications', () => {
    const book = new NotificationBook();
    expect(ids(book.pass([call('a')], null, true).show)).toStrictEqual(['a']);
    expect(book.pass([call('a')], null, true)).toStrictEqual({ close: [], show: [] });
    expect(book.pass([], null, true)).toStrictEqual({ close: [], show: [] });
  });

  it('forgets a call once it neither waits nor has a notification listed', () => {
    const book = new NotificationBook();
    book.pass([call('a')], tags(), true);
    book.pass([], tags(), true);
    // Forgotten, so a call listed later under that tag is another tab's, and is left alone.
    expect(book.pass([], tags('a'), true).close).toStrictEqual([]);
  });

  it('notes calls while notifications are off, and shows those still waiting once they are on and the tab is hidden', () => {
    const book = new NotificationBook();
    book.see([call('a'), call('b')]);
    expect(book.pass([call('a'), call('b')], tags(), false).show).toStrictEqual([]);
    expect(book.pass([call('b'), call('c')], tags(), true).show).toStrictEqual([call('b'), call('c')]);
  });

  it('names once each listed notification of a call it has not seen waiting, to be asked about, and again once it was gone and is back', () => {
    const book = new NotificationBook();
    book.pass([call('a')], tags('a', 'left'), true);
    expect(book.unheardOf(tags('a', 'left'))).toStrictEqual(['left']);
    expect(book.unheardOf(tags('a', 'left'))).toStrictEqual([]);
    book.pass([call('a')], tags('a'), true);
    expect(book.unheardOf(tags('a'))).toStrictEqual([]);
    expect(book.unheardOf(tags('a', 'left'))).toStrictEqual(['left']);
  });

  it('names the calls it put on screen, to close as the tab goes', () => {
    const book = new NotificationBook();
    book.pass([call('seen')], tags(), false);
    book.pass([call('seen'), call('shown')], tags(), true);
    expect(book.shown()).toStrictEqual(['seen', 'shown']);
  });
});
