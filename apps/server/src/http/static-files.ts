import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';

export interface StaticFilesOptions {
  /** Folder of the built web app (apps/web/dist). It may appear later: it is looked up on each request. */
  root: string;
}

const CONTENT_TYPES = new Map<string, string>([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.mjs', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.json', 'application/json; charset=utf-8'],
  ['.map', 'application/json; charset=utf-8'],
  ['.webmanifest', 'application/manifest+json; charset=utf-8'],
  ['.txt', 'text/plain; charset=utf-8'],
  ['.svg', 'image/svg+xml'],
  ['.png', 'image/png'],
  ['.jpg', 'image/jpeg'],
  ['.jpeg', 'image/jpeg'],
  ['.gif', 'image/gif'],
  ['.webp', 'image/webp'],
  ['.ico', 'image/x-icon'],
  ['.woff', 'font/woff'],
  ['.woff2', 'font/woff2'],
  ['.ttf', 'font/ttf'],
  ['.wasm', 'application/wasm'],
]);

const BUILD_HINT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Airlock</title></head>
<body><h1>Airlock is running</h1><p>The web app has not been built yet. Run <code>pnpm build</code>, then reload this page.</p></body></html>
`;

/**
 * Serves the built single-page app: files under `root`, `index.html` for any other path that does not
 * look like a file (client-side routes). Paths are resolved and checked to stay inside `root`, symlinks included.
 */
export class StaticFiles {
  private readonly root: string;

  constructor(options: StaticFilesOptions) {
    this.root = resolve(options.root);
  }

  /** Answers a GET or HEAD for `pathname` (still percent-encoded). `headers` are added to every answer. */
  async serve(pathname: string, res: ServerResponse, options: { head: boolean; headers: Record<string, string> }): Promise<void> {
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { ...options.headers, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-cache' });
      res.end(options.head ? undefined : body);
    };
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathname);
    } catch {
      send(400, 'text/plain; charset=utf-8', 'Bad Request\n');
      return;
    }
    if (!decoded.startsWith('/') || decoded.includes('\0') || decoded.split('/').some((segment) => segment.startsWith('.'))) {
      send(404, 'text/plain; charset=utf-8', 'Not Found\n');
      return;
    }
    const root = await realpath(this.root).catch(() => undefined);
    if (root === undefined) {
      if (looksLikeFile(decoded)) send(404, 'text/plain; charset=utf-8', 'Not Found\n');
      else send(200, 'text/html; charset=utf-8', BUILD_HINT);
      return;
    }
    const file = (await this.fileInside(root, decoded)) ?? (looksLikeFile(decoded) ? undefined : await this.fileInside(root, '/index.html'));
    if (file === undefined) {
      send(404, 'text/plain; charset=utf-8', 'Not Found\n');
      return;
    }
    res.writeHead(200, {
      ...options.headers,
      'Content-Type': CONTENT_TYPES.get(extname(file.path).toLowerCase()) ?? 'application/octet-stream',
      'Content-Length': file.size,
      // Vite puts a content hash in every asset name; index.html must be revalidated to pick up new ones.
      'Cache-Control': file.path.startsWith(`${root}${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    if (options.head) {
      res.end();
      return;
    }
    await pipeline(createReadStream(file.path), res);
  }

  private async fileInside(root: string, decoded: string): Promise<{ path: string; size: number } | undefined> {
    const candidate = resolve(root, `.${decoded}`);
    if (!isInside(root, candidate)) return undefined;
    try {
      const real = await realpath(candidate);
      if (!isInside(root, real)) return undefined;
      const info = await stat(real);
      return info.isFile() ? { path: real, size: info.size } : undefined;
    } catch {
      return undefined;
    }
  }
}

function isInside(root: string, path: string): boolean {
  return path.startsWith(root + sep);
}

/** A last segment with an extension names a file: a missing one is a 404, not the app. */
function looksLikeFile(decoded: string): boolean {
  const last = decoded.slice(decoded.lastIndexOf('/') + 1);
  return extname(last) !== '';
}
