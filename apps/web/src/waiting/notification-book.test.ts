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

  it('never shows a call first seen while the tab was visible', () => {
    const book = new NotificationBook();
    expect(book.pass([call('a')], tags(), false).show).toStrictEqual([]);
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

  it('notes calls while notifications are off, and does not show them once they are turned on', () => {
    const book = new NotificationBook();
    book.see([call('a')]);
    expect(book.pass([call('a'), call('b')], tags(), true).show).toStrictEqual([call('b')]);
  });
});
