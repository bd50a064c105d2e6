import { wellFormedText } from './well-formed-text';

/**
 * Text a tool hands to a process to run (a command line, a program): well-formed, and with no NUL. A process takes its
 * arguments as C strings, so Node refuses one holding a NUL (and Python's compile() refuses such code): the call was
 * put up for a decision it could never run, and failed after Allow with an error naming the sandbox's internal
 * argument index. Refused as invalid arguments, before a card, with an error the model can act on.
 */
export function processText(field: string) {
  return wellFormedText(field).refine((text) => !text.includes('\0'), {
    message: `${field} holds a NUL character (U+0000), which a process cannot be given: it could not run as shown. Send it without the NUL (write \\0 or \\x00 in the command or code if the program should produce one).`,
  });
}
