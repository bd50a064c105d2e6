/**
 * What a client says of the stored records a chat's page (`sessions.get`'s `leftOut`) left out as damaged (`records`,
 * each the record and why), so the person reads what the model was told rather than what a call's ledger row shows.
 */
export function leftOutNotice(records: readonly string[]): string {
  const which = records.length === 1 ? 'A stored record of this chat is' : `${records.length} stored records of this chat are`;
  return (
    `${which} damaged and left out when the chat is read (${records.join('; ')}). The model does not read a left-out ` +
    "message either, nor the results of a model turn left out: where it was a call's result, the model was told the call " +
    "has no recorded result and may have done part or all of its work, whatever the call's ledger row shows. A call " +
    'whose ledger row is left out is shown with no decision. Each record is left as stored.'
  );
}
