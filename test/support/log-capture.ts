import { Writable } from 'node:stream';

/** A log destination that keeps every line written to it (tests read what was logged). */
export class LogCapture extends Writable {
  readonly lines: string[] = [];

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.lines.push(String(chunk));
    done();
  }

  get text(): string {
    return this.lines.join('');
  }
}
