import { describe, expect, it } from 'vitest';
import { decisionErrorNote } from './decision-refusal';

/** An error as the client throws for an answer of the server with `code`. */
const answered = (code: string) => Object.assign(new Error('x'), { data: { code } });

describe('decisionErrorNote', () => {
  // A refusal was told as "The decision was not sent (…); try again" though the server had it and refused it.
  it.each([
    ['TIMEOUT', 'it reached the server after its deadline'],
    ['BAD_REQUEST', 'it was not valid'],
    ['CONFLICT', 'it cannot be applied to the call as it is now'],
    ['TOO_MANY_REQUESTS', 'too many requests for now'],
    ['UNAUTHORIZED', 'this terminal is not authorized'],
    ['FORBIDDEN', 'this terminal is not authorized'],
    ['NOT_FOUND', 'what it names is gone'],
  ])('says a %s was sent and refused, nothing applied', (code, why) => {
    expect(decisionErrorNote(answered(code), 'the words')).toBe(`The server refused the decision: ${why} (the words). Nothing was applied; the call still waits.`);
  });

  it('says a failure on the server may have been applied', () => {
    expect(decisionErrorNote(answered('INTERNAL_SERVER_ERROR'), 'internal error')).toBe(
      'The server failed on the decision (internal error): it may have been applied, and is shown if it was. If the call is asked again, it still waits.',
    );
  });

  // "The decision was not sent", where the web card says "No answer came to your decision" for the same error: a
  // decision with no answer may have been sent.
  it('says no answer came to a decision the server did not answer, in the web card\'s words', () => {
    expect(decisionErrorNote(new Error('x'), 'socket closed')).toBe('No answer came to the decision (socket closed). Check the connection and try again.');
  });
});
