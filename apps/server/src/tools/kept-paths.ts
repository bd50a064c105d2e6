import type { BrowserPlaces } from './browser-profiles';

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * `make`, answered again from the last answer while the places and every variable `make` read hold the same values:
 * the paths of the user's histories and editors' files are made from them alone, yet were made again at each tool
 * use. Which variables count is recorded as `make` reads them, so a variable it comes to read is never missed.
 */
export function keptWhileSame(make: (places: BrowserPlaces, env: Environment) => readonly string[]): (places: BrowserPlaces, env: Environment) => readonly string[] {
  let kept: { places: string; names: string[]; values: (string | undefined)[]; paths: readonly string[] } | undefined;
  return (places, env) => {
    const placesKey = JSON.stringify([places.home, places.configHome, places.cacheHome, places.dataHome]);
    if (kept !== undefined && kept.places === placesKey && kept.names.every((name, i) => env[name] === kept!.values[i])) return kept.paths;
    const read = new Map<string, string | undefined>();
    const recording = new Proxy(env, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof name === 'string') read.set(name, typeof value === 'string' ? value : undefined);
        return value;
      },
    });
    const paths = make(places, recording);
    kept = { places: placesKey, names: [...read.keys()], values: [...read.values()], paths };
    return paths;
  };
}
