import { describe, expect, it, vi } from 'vitest';
import { notificationOffersAllow, notificationShowsWhole } from './use-decision-notifications';

vi.mock('../lib/trpc', () => ({ trpc: {} }));

const call = (toolName: string) => ({
  toolName,
  arguments: { project: 'apollo' },
  inputSchema: { type: 'object', properties: { project: { type: 'string' } } },
});

// Found from outside: a notification for `hostile__delete_all_customer_records_from_the_database_for_real` offered
// Allow, judged on its short body alone; its title, cut by the system, is where it differs from `…_dry_run`.
describe('a decision notification', () => {
  it('offers Allow only when the title holds the whole tool name, short enough that no system cuts it', () => {
    expect(notificationShowsWhole(call('hostile__archive'))).toBe(true);
    expect(notificationShowsWhole(call('x__create_pull_request'))).toBe(true);
    expect(notificationShowsWhole(call('x__create_pull_request_review'))).toBe(false);
    expect(notificationShowsWhole(call('hostile__archive_project_documents_and_purge_originals'))).toBe(false);
    expect(notificationShowsWhole(call('hostile__delete_all_customer_records_from_the_database_for_real'))).toBe(false);
  });

  it('offers no Allow for a call a deny rule asked about, short as it is: only its card says why it is asked', () => {
    expect(notificationOffersAllow(call('hostile__archive'))).toBe(true);
    expect(notificationOffersAllow({ ...call('hostile__archive'), exactGrantsOnly: true })).toBe(false);
    expect(notificationOffersAllow({ ...call('hostile__archive'), exactGrantsOnly: false })).toBe(true);
    expect(notificationOffersAllow(call('hostile__delete_all_customer_records_from_the_database_for_real'))).toBe(false);
  });
});
