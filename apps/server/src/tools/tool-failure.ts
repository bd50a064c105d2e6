import { errorMessage, type ToolOutput } from '@airlock/core';

/** A failed call as the model sees it: a result with isError, never a throw. */
export function toolFailure(message: string): ToolOutput {
  return { content: message.startsWith('Refused:') ? message : `Error: ${message}`, isError: true };
}

const FILE_ERRORS = new Map<string, string>([
  ['ENOENT', 'no such file or directory'],
  ['ENOTDIR', 'a part of the path is not a directory'],
  ['EISDIR', 'it is a directory'],
  ['EACCES', 'permission denied'],
  ['EPERM', 'operation not permitted'],
  ['ENOSPC', 'no space left on the device'],
  ['EROFS', 'read-only file system'],
  ['ELOOP', 'too many levels of symbolic links'],
  ['ENAMETOOLONG', 'a name in the path is too long'],
]);

/** Runs a tool body and turns anything it throws into a failed result; file errors are described without host paths. */
export async function failuresAsResults(requested: string, body: () => Promise<string | ToolOutput>): Promise<string | ToolOutput> {
  try {
    return await body();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const known = code === undefined ? undefined : FILE_ERRORS.get(code);
    if (known !== undefined) return toolFailure(`"${requested}": ${known}`);
    // Any other error from the system: its code, not its message, which names the host path it was given.
    if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && (error as NodeJS.ErrnoException).syscall !== undefined) return toolFailure(`"${requested}": ${code}`);
    return toolFailure(errorMessage(error));
  }
}
