import { decodeClusterMessage, type ClusterMessage } from '@airlock/api';
import { Client, escapeIdentifier, type ClientConfig, type Notification } from 'pg';

export interface PostgresListenerOptions {
  /** How to connect (a connection of its own, outside the pool: LISTEN holds it for good). */
  config: ClientConfig;
  /** The notification channel, as passed to pg_notify. */
  channel: string;
  /** Receives a line when the connection is lost and when it is back. */
  log: (line: string) => void;
  /** The first wait before reconnecting, doubled at each failure. Default 100 ms. */
  minRetryMs?: number;
  /** The longest wait between two attempts. Default 5,000 ms. */
  maxRetryMs?: number;
  /** How often the connection is asked a query of its own, to find out whether it still answers. Default 5,000 ms. */
  checkIntervalMs?: number;
  /** How long that query's answer (and LISTEN's, on connecting) is waited for before the connection is taken as lost. Default 10,000 ms. */
  checkTimeoutMs?: number;
}

/**
 * One connection that LISTENs on a channel and hands every decodable notification to the subscribers. When the
 * connection drops it reconnects with backoff and, once it listens again, tells the subscribers `{ type: 'resync' }`:
 * notifications sent meanwhile are lost, so they re-read what they follow.
 *
 * A connection only listening sends nothing, so a path that dies without closing (a network or a proxy dropping it,
 * a firewall forgetting an idle connection) would never be noticed, and every message after it would be missed
 * for good: the connection is asked a query every checkIntervalMs, and taken as lost when it does not answer.
 */
export class PostgresListener {
  private readonly listeners = new Set<(message: ClusterMessage) => void>();
  private client: Client | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(private readonly options: PostgresListenerOptions) {}

  /** Connects and listens; rejects when the first connection fails. */
  static async open(options: PostgresListenerOptions): Promise<PostgresListener> {
    const listener = new PostgresListener(options);
    await listener.connect();
    return listener;
  }

  subscribe(listener: (message: ClusterMessage) => void): () => void {
    // Wrapped, so that the same function subscribed twice is called twice and unsubscribed once each.
    const entry = (message: ClusterMessage) => listener(message);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Whether the connection is up and listening (false while reconnecting). */
  get listening(): boolean {
    return this.client !== undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.checkTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const client = new Client(this.options.config);
    // Registered before connecting: an 'error' event without a handler would end the process.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    client.on('notification', (notification) => this.receive(notification));
    try {
      await client.connect();
      await this.answered(client, `LISTEN ${escapeIdentifier(this.options.channel)}`);
    } catch (error) {
      drop(client);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    let checking = false;
    this.checkTimer = setInterval(() => {
      if (checking || this.client !== client) return;
      checking = true;
      this.answered(client, 'SELECT 1').then(
        () => (checking = false),
        (error: unknown) => this.lost(client, error instanceof Error ? error : new Error(String(error))),
      );
    }, this.options.checkIntervalMs ?? 5000);
    this.checkTimer.unref();
  }

  /** Runs `sql` on the connection; rejects when it fails or does not answer within checkTimeoutMs. */
  private answered(client: Client, sql: string): Promise<void> {
    const timeoutMs = this.options.checkTimeoutMs ?? 10_000;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`it did not answer within ${timeoutMs} ms`)), timeoutMs);
      client.query(sql).then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  private receive(notification: Notification): void {
    if (notification.channel !== this.options.channel || notification.payload === undefined) return;
    const message = decodeClusterMessage(notification.payload);
    if (message !== undefined) this.deliver(message);
  }

  private deliver(message: ClusterMessage): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(message);
      } catch (error) {
        this.options.log(`A listener of store notifications failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private lost(client: Client, error: Error | undefined): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    clearInterval(this.checkTimer);
    drop(client);
    this.options.log(`Lost the PostgreSQL notification connection${error === undefined ? '' : ` (${error.message})`}; reconnecting.`);
    this.retry(this.options.minRetryMs ?? 100);
  }

  private retry(delayMs: number): void {
    this.retryTimer = setTimeout(() => {
      this.connect().then(
        () => {
          if (this.closed) return;
          this.options.log('The PostgreSQL notification connection is back.');
          this.deliver({ type: 'resync' });
        },
        () => {
          if (!this.closed) this.retry(Math.min(delayMs * 2, this.options.maxRetryMs ?? 5000));
        },
      );
    }, delayMs);
    this.retryTimer.unref();
  }
}

/** Ends a connection without waiting on the other end: one whose path died would otherwise linger until the system gives up on it. */
function drop(client: Client): void {
  client.end().catch(() => {});
  client.connection.stream.destroy();
}
