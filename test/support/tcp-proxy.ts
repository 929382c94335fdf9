import { createServer, Server, Socket, connect } from 'node:net';

interface Link {
  client: Socket;
  upstream?: Socket;
}

/**
 * A TCP proxy in front of PostgreSQL that a test can cut and restore, to see how the
 * service behaves while its database is unreachable: `cut()` refuses (connections closed,
 * nothing listens), `stall()` is a network partition (connections stay open, new ones are
 * accepted, but no byte goes through until `resume()`).
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly links = new Set<Link>();
  private stalled = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(port = this.port): Promise<void> {
    this.server = createServer((client) => {
      const link: Link = { client };
      this.track(client);
      this.links.add(link);
      client.on('close', () => {
        link.upstream?.destroy();
        this.links.delete(link);
      });
      if (this.stalled) client.pause();
      else this.forward(link);
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : port;
  }

  /** A partition: bytes are held in both directions, and new connections get no answer. */
  stall(): void {
    this.stalled = true;
    for (const { client, upstream } of this.links) {
      client.unpipe();
      upstream?.unpipe();
      client.pause();
      upstream?.pause();
    }
  }

  /**
   * The partition heals: held bytes flow again and waiting connections reach the database. With
   * `abandon`, the connections caught in the partition stay silent for ever (as when the database
   * moved to another host) and only new ones get through.
   */
  resume(options: { abandon?: boolean } = {}): void {
    this.stalled = false;
    for (const link of this.links) {
      if (options.abandon) this.links.delete(link);
      else this.forward(link);
    }
  }

  private forward(link: Link): void {
    if (!link.upstream) {
      const upstream = connect(this.targetPort, this.targetHost);
      this.track(upstream);
      upstream.on('close', () => link.client.destroy());
      link.upstream = upstream;
    }
    link.client.pipe(link.upstream);
    link.upstream.pipe(link.client);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  /** Closes the listener and every open connection: the database "goes away". */
  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** Urls through the proxy keep the database, user and password of the target URL. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }
}
