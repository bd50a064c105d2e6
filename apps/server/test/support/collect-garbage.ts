import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;
const finalized = new FinalizationRegistry<() => void>((heard) => heard());

/** Registered in a frame of its own, so no register of the caller's still holds it at the collection. */
function plant(heard: () => void): void {
  finalized.register({}, heard);
}

/**
 * Full garbage collections, each awaited until finalizers (FinalizationRegistry callbacks) have run after it: what a
 * busy process does between two steps of a long request, made to happen now. `--expose-gc` is set here, so a test
 * needs no flag of its own.
 */
export async function collectGarbage(rounds = 2): Promise<void> {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  for (let round = 0; round < rounds; round += 1) {
    // An object nothing holds, whose finalizer says the collection's finalizers are being run.
    await new Promise<void>((resolve) => {
      plant(resolve);
      gc!();
    });
    // The other registries' callbacks run in the same task as this one, or in tasks queued beside it.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
