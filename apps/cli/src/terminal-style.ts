/** How the client marks up what it writes; plain when the output is not a terminal or NO_COLOR is set. */
export interface TerminalStyle {
  dim: (text: string) => string;
  bold: (text: string) => string;
  /** An escape standing for a hidden character: it must not look like text the model wrote. */
  escape: (text: string) => string;
  warn: (text: string) => string;
  good: (text: string) => string;
  bad: (text: string) => string;
}

const sgr = (open: number, close: number) => (text: string) => (text === '' ? text : `\x1b[${open}m${text}\x1b[${close}m`);

export const ansiStyle: TerminalStyle = {
  dim: sgr(2, 22),
  bold: sgr(1, 22),
  escape: sgr(7, 27),
  warn: sgr(33, 39),
  good: sgr(32, 39),
  bad: sgr(31, 39),
};

const same = (text: string) => text;

export const plainStyle: TerminalStyle = { dim: same, bold: same, escape: same, warn: same, good: same, bad: same };

export function styleFor(output: { isTTY?: boolean }, env: Readonly<Record<string, string | undefined>>): TerminalStyle {
  return output.isTTY === true && (env.NO_COLOR ?? '') === '' ? ansiStyle : plainStyle;
}
