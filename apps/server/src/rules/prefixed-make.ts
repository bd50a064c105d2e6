/** GNU make as a cross build installs it, named for its target (`mingw32-make`, `x86_64-w64-mingw32-make`). */
const PREFIXED_MAKE = /^[\w.+-]+-make$/;

/**
 * Whether `name` (a base name) is make under a cross build's name: judged as make by allow rules, and a project
 * runner, as make's other names in the table of programs are (`gmake`, `bsdmake`, `makepp`).
 */
export function isPrefixedMake(name: string): boolean {
  return PREFIXED_MAKE.test(name);
}
