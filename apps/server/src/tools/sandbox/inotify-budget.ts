import { inotifyLimits, type InotifyLimits } from './namespace-limits';

/**
 * The inotify instances and watches the calls running at once may hold in all. The kernel counts them per user, and a
 * call's own limits (inotifyLimits, an eighth of the user's) bound one call: eight at once held every instance the
 * user had, and the server's own watch and the person's editors got none. These bound them all to half the user's,
 * the other half left to this server and the person's programs: a call gets its eighth, or half of what the calls
 * running leave of that half (rounded up), whichever is fewer. One that starts while many hold theirs gets less, so
 * more calls get some; one that starts while they hold it all gets none (its inotify_init fails with EMFILE, an
 * inotify_add_watch with ENOSPC) until one ends.
 *
 * What a call got is given back once the call is over (`release`); the limits are read anew at each call.
 */
export class InotifyBudget {
  readonly #held = new Set<InotifyLimits>();

  /** The limits of a call that starts now, of `user`'s (userInotifyLimits); undefined when they could not be read. */
  take(user: InotifyLimits | undefined): InotifyLimits | undefined {
    const share = inotifyLimits(user);
    if (user === undefined || share === undefined) return undefined;
    let [instances, watches] = [0, 0];
    for (const held of this.#held) {
      instances += held.instances;
      watches += held.watches;
    }
    const part = (own: number, all: number, heldNow: number) => Math.min(own, Math.ceil(Math.max(0, Math.floor(all / 2) - heldNow) / 2));
    const limits = { instances: part(share.instances, user.instances, instances), watches: part(share.watches, user.watches, watches) };
    this.#held.add(limits);
    return limits;
  }

  /** Gives back what `take` gave a call; a second time does nothing. */
  release(limits: InotifyLimits): void {
    this.#held.delete(limits);
  }
}

/** This server's: every call it runs takes its limits from it. */
export const inotifyBudget = new InotifyBudget();
