import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { defineTool, type ToolContext, type ToolOutput } from '@airlock/core';
import { z } from 'zod';
import type { ResolvedToolsOptions } from './builtin-tools-options';
import { executablesOnPath } from './find-executable';
import { pythonEncodingDeclaration } from './python-encoding-declaration';
import { pythonLineBreakIssue, pythonLineBreakMessage } from './python-line-breaks';
import { processToolOutput } from './process-tool-output';
import { childSearchPath, runOutsideWorkspace, runToolProcess } from './run-tool-process';
import { CALL_OWN_FOLDERS } from './sandbox/veiled-folders';
import { SelfRunningInterpreters } from './self-running-interpreters';
import { failuresAsResults, toolFailure } from './tool-failure';
import { oneLine } from './one-line';
import { isWithin } from './path-within';
import type { WorkspacePaths } from './workspace-paths';
import { processText } from './process-text';

const MAX_CODE_CHARS = 1_000_000;
const EXECUTABLE_LINE = 'airlock-python-executable';
/** What tracebacks and `__file__` call the code: no file of the workspace, so no file's lines are shown as its own. */
const SCRIPT_NAME = '<main.py>';

const parameters = z.object({
  code: processText('the code')
    .min(1)
    .max(MAX_CODE_CHARS)
    .superRefine((code, context) => {
      const lineBreak = pythonLineBreakIssue(code);
      if (lineBreak !== undefined) context.addIssue({ code: 'custom', message: pythonLineBreakMessage(lineBreak) });
      const declared = pythonEncodingDeclaration(code);
      if (declared === undefined) return;
      context.addIssue({
        code: 'custom',
        message:
          `the code declares its source encoding as "${declared.name}" on line ${declared.line}; Python would decode the code ` +
          'that way, and what ran would not be the text the person is shown. Remove the declaration (Python reads UTF-8) ' +
          'or declare utf-8.',
      });
    })
    .describe('The Python 3 program to run.'),
});

/**
 * Runs the code as the text it is, not as the bytes of a file: Python decodes a file by the encoding its first two
 * lines declare (PEP 263), and `# coding: utf-7` turns `+AAo-` in a comment the card shows into a line break and the
 * rest of that comment into code. compile() of a str ignores the declaration. The code comes on standard input, from
 * the server's memory, which is then /dev/null for the code itself: a script file in a folder (the server's TMPDIR)
 * could be rewritten after the card by another call able to write there, or be a link the server wrote the code
 * through. Tracebacks name `<main.py>`, their lines read from the code itself (by traceback, which reads linecache;
 * the interpreter's own printer would open a file of that name in the workspace), never from a file. The
 * frames of this bootstrap are left out of a traceback, so that the model sees the script's own, as when Python runs
 * a file. It runs `site` itself (the interpreter runs with -S), importing `sitecustomize` with the workspace's folders
 * off sys.path: a `.pth` file of the interpreter's site-packages may name one (a workspace project installed editable,
 * src layout), and a `sitecustomize.py` there, which a repository or another call can leave, would run at every start.
 * `__main__` has a spec named `__main__`: multiprocessing's spawn and forkserver children then import no main
 * module (init_main_from_name) where, knowing it only by its `__file__`, they would run `<workspace>/<main.py>`, a
 * file a repository or another call can leave there, under the grant of code that never names it.
 */
const BOOTSTRAP = `def main():
    import os, site, sys
    workspace = os.getcwd()
    def in_workspace(entry):
        real = os.path.realpath(entry or ".")
        return real == workspace or real.startswith(workspace.rstrip(os.sep) + os.sep)
    customize = site.execsitecustomize
    def execsitecustomize():
        hidden = [(index, entry) for index, entry in enumerate(sys.path) if isinstance(entry, str) and in_workspace(entry)]
        for index, _ in reversed(hidden):
            del sys.path[index]
        try:
            customize()
        finally:
            for index, entry in hidden:
                sys.path.insert(index, entry)
    site.execsitecustomize = execsitecustomize
    try:
        site.main()
    finally:
        site.execsitecustomize = customize
    import importlib.machinery, linecache, traceback
    name = "${SCRIPT_NAME}"
    namespace = sys.modules["__main__"].__dict__
    del namespace["main"]
    source = sys.stdin.buffer.read().decode("utf-8")
    empty = os.open(os.devnull, os.O_RDONLY)
    os.dup2(empty, 0)
    os.close(empty)
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    try:
        code = compile(source, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        traceback.print_exception(type(error), error, None)
        sys.exit(1)
    namespace["__file__"] = name
    namespace["__spec__"] = importlib.machinery.ModuleSpec("__main__", None)
    namespace["__cached__"] = None
    sys.argv[:] = [name]
    try:
        exec(code, namespace)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as error:
        traceback.print_exception(type(error), error, error.__traceback__.tb_next)
        sys.exit(1)
main()
`;

export interface PythonToolSeams {
  /** Starts an interpreter to ask which executable it runs. Default `runOutsideWorkspace`; tests count the asks. */
  ask?: typeof runOutsideWorkspace;
}

export function createPythonTool(options: ResolvedToolsOptions, paths: WorkspacePaths, seams: PythonToolSeams = {}) {
  const passedOver = new Set<string>();
  const selfRunning = new SelfRunningInterpreters();
  const ask = seams.ask ?? runOutsideWorkspace;
  return defineTool<z.infer<typeof parameters>>({
    name: 'python',
    description:
      'Run a Python 3 program with the workspace folder as its working directory and return what it prints ' +
      '(stdout and stderr), then its exit code. Use print() to show results; standard input is closed. ' +
      'Python runs isolated: to import a module from the workspace, add `import sys; sys.path.insert(0, ".")` first. ' +
      'The interpreter is the first python3 on PATH outside the workspace: a virtualenv in the workspace is not used, ' +
      'and a version manager\'s shim runs the version chosen outside the workspace (its .tool-versions or .python-version are not read).',
    parameters,
    annotations: { executesCode: true, destructive: true },
    source: 'builtin',
    execute: ({ code }, context) =>
      failuresAsResults('python', async () => {
        const searchPath = childSearchPath(options);
        const found = await interpreterOutside({ options, paths, searchPath, context, ask, selfRunning });
        if (typeof found === 'object' && 'content' in found) return found;
        if (found.python === undefined) {
          if (found.inWorkspace.length > 0) {
            return toolFailure(
              `python3 was found on PATH only inside the workspace (${found.inWorkspace.join(', ')}), where the code it runs could change it, so the code was not run.`,
            );
          }
          return toolFailure(`python3 was not found on PATH (${searchPath ?? 'PATH is not set'}), so the code was not run.`);
        }
        for (const skipped of found.inWorkspace) {
          if (passedOver.has(skipped)) continue;
          passedOver.add(skipped);
          options.log(`python: ${skipped} is inside the workspace and is not used (a virtualenv there runs its site-packages' .pth files and sitecustomize at every start); using ${oneLine(found.python)}.`);
        }
        // On standard input rather than `-c <code>`: no argument-length limit. Isolated mode (-I): no PYTHON*
        // variables, no user site, not the workspace on the import path, so a sitecustomize.py or a module planted in
        // the workspace runs only if the code asks for it. -S: the bootstrap runs site, keeping the workspace out of
        // sitecustomize's way (multiprocessing starts its children with -S too; they get the code's sys.path from it).
        // -B and -u stand in for PYTHONDONTWRITEBYTECODE and PYTHONUNBUFFERED, which -I ignores.
        const args = ['-I', '-S', '-B', '-u', '-c', BOOTSTRAP];
        return await runToolProcess(options, paths, { file: found.python, args, input: code }, context);
      }),
  });
}

/**
 * Asks an interpreter which executable it runs as: a version manager's shim (mise, asdf, pyenv) starts another one,
 * chosen by files such as `.tool-versions` in the folder it starts in, and `python path:<workspace>/evil` there would
 * name one a call planted. The executable Python was started from, or the one /proc says it is when that differs
 * (a shim that starts it under a bare name).
 */
const WHICH_EXECUTABLE = `import json, os, sys
executable = sys.executable
try:
    if not executable or not os.path.samefile(executable, "/proc/self/exe"):
        executable = os.path.realpath("/proc/self/exe")
except OSError:
    pass
print("${EXECUTABLE_LINE} " + json.dumps(executable))
`;

interface InterpreterSearch {
  options: ResolvedToolsOptions;
  paths: WorkspacePaths;
  searchPath: string | undefined;
  context: ToolContext;
  ask: typeof runOutsideWorkspace;
  /** Candidates that named themselves before and are unchanged since: run without asking again. */
  selfRunning: SelfRunningInterpreters;
}

/**
 * The interpreter that the first python3 on `searchPath` outside the workspace runs, and those passed over because
 * they, or the interpreter they run, are in the workspace. One there (an activated `.venv`, a path that leads into
 * the workspace, a shim's choice) would run, at every start and even in isolated mode, the `.pth` files and
 * sitecustomize of its site-packages, which an earlier call could have written, or be a program a call wrote. Each
 * candidate is asked which executable it runs (see runOutsideWorkspace: in `/`, the workspace read-only), and that
 * executable is what the call runs, so no file in the workspace chooses it. A candidate that named itself, and is the
 * same file now, is not asked again (see SelfRunningInterpreters); a shim is asked at every call.
 */
async function interpreterOutside(search: InterpreterSearch): Promise<{ python: string | undefined; inWorkspace: string[] } | ToolOutput> {
  const workspace = await search.paths.root();
  const inWorkspace: string[] = [];
  for (const candidate of executablesOnPath('python3', search.searchPath)) {
    const placed = await isInWorkspace(workspace, candidate);
    if (placed !== false) {
      if (placed) inWorkspace.push(oneLine(candidate));
      continue;
    }
    const identity = await search.selfRunning.identity(candidate);
    if (identity !== undefined && search.selfRunning.has(identity)) return { python: candidate, inWorkspace };
    const asked = await search.ask(
      search.options,
      search.paths,
      { file: candidate, args: ['-I', '-S', '-c', WHICH_EXECUTABLE], readOnlyPaths: boundForAsking(candidate) },
      search.context,
    );
    const answer = [...asked.output.matchAll(new RegExp(`^${EXECUTABLE_LINE} (".*")$`, 'gm'))].at(-1)?.[1];
    const executable = answer === undefined ? undefined : (JSON.parse(answer) as unknown);
    if (asked.exitCode !== 0 || typeof executable !== 'string' || !path.isAbsolute(executable)) {
      return toolFailure(`${candidate} did not say which interpreter it runs (${processToolOutput(asked).content.trim()}), so the code was not run.`);
    }
    if ((await isInWorkspace(workspace, executable)) !== false) {
      // Named on one line: the executable is what the interpreter answered, which a file the call wrote can choose.
      inWorkspace.push(executable === candidate ? oneLine(candidate) : `${oneLine(candidate)} (which runs ${oneLine(executable)})`);
      continue;
    }
    if (executable === candidate && identity !== undefined) search.selfRunning.remember(identity);
    return { python: executable, inWorkspace };
  }
  return { python: undefined, inWorkspace };
}

/**
 * What the sandbox of the ask binds of a candidate: the candidate itself only where the call has a folder of its own
 * (a shim under /tmp), which holds nothing of the host's, so that it is there to start. Elsewhere the call sees it
 * as the host does, and a bind over it would fail where it is a link (a virtualenv's `bin/python3`): bubblewrap
 * cannot make a mount point at a link.
 */
function boundForAsking(candidate: string): string[] {
  return CALL_OWN_FOLDERS.some((own) => isWithin(own, candidate)) ? [candidate] : [];
}

/**
 * Whether an executable lies in the workspace, by its file or any folder on the path it is found at, each resolved:
 * a venv's python3 is a link to the system's, and Python finds the venv's pyvenv.cfg beside or above the path it was
 * started by, links in that path unresolved (a workspace `.venv` whose `bin` is a link to /usr/bin). Undefined when
 * one cannot be resolved.
 */
async function isInWorkspace(workspace: string, executable: string): Promise<boolean | undefined> {
  const folders: string[] = [];
  for (let folder = path.dirname(path.resolve(executable)); !folders.includes(folder); folder = path.dirname(folder)) folders.push(folder);
  const real = await Promise.all([executable, ...folders].map((entry) => realpath(entry))).catch(() => undefined);
  return real?.some((resolved) => isWithin(workspace, resolved));
}
