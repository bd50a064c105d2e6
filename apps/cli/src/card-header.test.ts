import { describe, expect, it } from 'vitest';
import { toolCallCard } from './render-tool-call';
import { plainStyle } from './terminal-style';

const hints = { readOnly: false, destructive: true, executesCode: false, exactGrants: true, idempotent: false, openWorld: false };

function card(toolName: string, source: string, columns: number, whole = false) {
  const event = { type: 'tool-start' as const, toolCallId: 'c1', toolName, arguments: { table: 'customers' }, approvalId: 'apv_1', awaitingConfirmation: true, tool: { source, declared: { names: [{ name: 'table' }] }, annotations: hints } };
  return toolCallCard(event, plainStyle, { columns, rows: 24, whole }).lines;
}

// Found from outside: at 60 columns `hostile__delete_all_customer_records_from_the_database_dry_run` and `…_for_real`
// were both drawn `⏺ hostile__delete_all_customer_r…`, on the card and in its `v` view, and `a` ran the one shown cut.
describe("a card's tool and server names", () => {
  const real = 'hostile__delete_all_customer_records_from_the_database_for_real';
  const dry = 'hostile__delete_all_customer_records_from_the_database_dry_run';

  it('are wrapped over rows, whole, never cut, each row within the width and after the first indented', () => {
    for (const whole of [false, true]) {
      expect(card(real, 'mcp:hostile', 60, whole).slice(0, 3)).toStrictEqual(['⏺ hostile__delete_all_customer_records_from_the_database_f', '  or_real  MCP · hostile', '  table: customers']);
      expect(card(dry, 'mcp:hostile', 60, whole).slice(0, 2)).toStrictEqual(['⏺ hostile__delete_all_customer_records_from_the_database_d', '  ry_run  MCP · hostile']);
    }
    expect(card(real, 'mcp:hostile', 100)[0]).toBe(`⏺ ${real}  MCP · hostile`);
  });

  it('puts a long server name on rows of its own, whole', () => {
    const server = 'a_server_name_long_enough_to_need_two_rows_of_its_own_here_and_more';
    const lines = card('x__t', `mcp:${server}`, 60);
    expect(lines.slice(0, 3)).toStrictEqual(['⏺ x__t', `  MCP · ${server.slice(0, 48)}`, `        ${server.slice(48)}`]);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
  });
});
