import { ConfigError } from './config';

/** Why the service could not listen, naming the setting to change when a setting is the cause. */
export function listenError(error: unknown, host: string, port: number): unknown {
  const { code, message } = error as NodeJS.ErrnoException;
  if (code === 'EADDRINUSE') return new ConfigError([`PORT ${port} is already in use on ${host} (${message})`]);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL') {
    return new ConfigError([`HOST ${host} is not an address of this machine (${message})`]);
  }
  if (code === 'EACCES') return new ConfigError([`PORT ${port} may not be opened by this process (${message})`]);
  return error;
}
