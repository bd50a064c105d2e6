import { useState } from 'react';
import { trpc } from '../lib/trpc';
import { proseText } from '../chat/prose-text';
import { ledgerFileName, leftOutOfExport, readLedger, toJsonLines } from './ledger-export';

/** Downloads every tool call the server has recorded, decided or not, as JSON Lines. */
export function ExportLedgerButton() {
  const utils = trpc.useUtils();
  const [state, setState] = useState<{ kind: 'idle' } | { kind: 'busy' } | { kind: 'done'; count: number; leftOut: string[] } | { kind: 'failed'; message: string }>({ kind: 'idle' });

  const exportLedger = async () => {
    setState({ kind: 'busy' });
    try {
      const { entries, leftOut } = await readLedger((query) => utils.client.audit.list.query(query));
      const url = URL.createObjectURL(new Blob([toJsonLines(entries)], { type: 'application/jsonl' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = ledgerFileName(new Date());
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 0);
      setState({ kind: 'done', count: entries.length, leftOut });
    } catch (error) {
      setState({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
    }
  };

  return (
    <div className="setting">
      <button type="button" className="btn" disabled={state.kind === 'busy'} onClick={() => void exportLedger()}>
        Export the ledger
      </button>
      <span className="hint">Every tool call of every chat: who decided, how and when, and how it ended (JSON Lines).</span>
      {state.kind === 'done' && (
        <span role="status">
          Exported {state.count === 1 ? '1 call' : `${state.count} calls`}.{state.leftOut.length > 0 && ` ${proseText(leftOutOfExport(state.leftOut))}`}
        </span>
      )}
      {state.kind === 'failed' && <span role="alert">Could not export the ledger: {state.message}</span>}
    </div>
  );
}
