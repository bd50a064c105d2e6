import { callShare, type CallCounts } from './namespace-limits';

/**
 * What the calls running at once may hold in all of each count of CallCounts: inotify instances and watches, fanotify
 * groups and marks and the bytes of POSIX message queues, which the kernel counts per user, and pseudo-terminals, which
 * every devpts but the host's first takes from one pool of the machine. A call's own limits (callShare, an eighth of
 * each) bound one call: eight at once held every inotify instance the user had, and the server's own watch and the
 * person's editors got none. These bound them all to half of each, the other half left to this server and the person's
 * programs (and containers): a call gets its share, or half of what the calls running leave of that half (rounded up),
 * whichever is fewer. One that starts while many hold theirs gets less, so more calls get some; one that starts while
 * they hold it all gets none (its inotify_init or fanotify_init fails with EMFILE, an inotify_add_watch with ENOSPC, an
 * mq_open with EMFILE, an openpty finds no /dev/ptmx) until one ends.
 *
 * What a call got is given back once the call is over (`release`); the counts are read anew at each call.
 */
export class CountBudget {
  readonly #held = new Set<CallCounts>();

  /** The counts of a call that starts now, of `all` (hostCounts); undefined when they could not be read. */
  take(all: CallCounts | undefined): CallCounts | undefined {
    if (all === undefined) return undefined;
    const share = callShare(all);
    const part = (kind: keyof CallCounts): number | undefined => {
      const [own, whole] = [share[kind], all[kind]];
      if (own === undefined || whole === undefined) return undefined;
      let held = 0;
      for (const counts of this.#held) held += counts[kind] ?? 0;
      return Math.min(own, Math.ceil(Math.max(0, Math.floor(whole / 2) - held) / 2));
    };
    const fanotify = { groups: part('fanotifyGroups'), marks: part('fanotifyMarks') };
    const counts: CallCounts = {
      instances: part('instances')!,
      watches: part('watches')!,
      ...(fanotify.groups === undefined || fanotify.marks === undefined ? {} : { fanotifyGroups: fanotify.groups, fanotifyMarks: fanotify.marks }),
      ptys: part('ptys')!,
      messageQueueBytes: part('messageQueueBytes')!,
    };
    this.#held.add(counts);
    return counts;
  }

  /** Gives back what `take` gave a call; a second time does nothing. */
  release(counts: CallCounts): void {
    this.#held.delete(counts);
  }
}

/** This server's: every call it runs takes its counts from it. */
export const countBudget = new CountBudget();
