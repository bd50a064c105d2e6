import type { AppRouter } from '@airlock/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import type { ReactElement, ReactNode } from 'react';
import { trpc } from './trpc';

/**
 * For tests: a tRPC client sending through `link` (the server the test plays), a query client that does not retry, and
 * `provide`, which renders what it is given under both, the same at every call, so a rerender keeps what was read.
 */
export function testTrpc(link: TRPCLink<AppRouter>): { provide: (children: ReactNode) => ReactElement; queryClient: QueryClient } {
  const client = trpc.createClient({ links: [link] });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const provide = (children: ReactNode) => (
    <trpc.Provider client={client} queryClient={queryClient}>
      <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
    </trpc.Provider>
  );
  return { provide, queryClient };
}

/** For tests: a link answering each request for `path` with `data`, and leaving every other request unanswered. */
export function answering(path: string, data: unknown): TRPCLink<AppRouter> {
  return () => ({ op }) =>
    observable((observer) => {
      if (op.path === path) {
        observer.next({ result: { type: 'data', data } });
        observer.complete();
      }
      return () => undefined;
    });
}
