import { isIP } from 'node:net';

/**
 * Webhook URL safety (SSRF), as plain functions: which addresses a webhook may be sent to,
 * and which URLs may be registered. The same classification runs at registration and at
 * delivery, on every address the host name resolves to (see webhook-transport.ts).
 */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

interface Range {
  /** The first address as 4 or 16 bytes and the prefix length. */
  bytes: number[];
  prefix: number;
  reason: string;
}

const v4 = (text: string, prefix: number, reason: string): Range => ({
  bytes: text.split('.').map(Number),
  prefix,
  reason,
});

const IPV4_REFUSED: Range[] = [
  v4('0.0.0.0', 8, 'an unspecified ("this network") address'),
  v4('10.0.0.0', 8, 'a private address'),
  v4('100.64.0.0', 10, 'a carrier-grade NAT (shared) address'),
  v4('127.0.0.0', 8, 'a loopback address'),
  v4('169.254.0.0', 16, 'a link-local address'),
  v4('172.16.0.0', 12, 'a private address'),
  v4('192.168.0.0', 16, 'a private address'),
  // Special-purpose blocks that are not reachable on the internet (IANA registry, RFC 6890).
  v4('192.0.0.0', 24, 'an IETF protocol assignment address'),
  v4('192.0.2.0', 24, 'a documentation (TEST-NET) address'),
  v4('192.88.99.0', 24, 'a 6to4 relay anycast address'),
  v4('198.18.0.0', 15, 'a benchmarking address'),
  v4('198.51.100.0', 24, 'a documentation (TEST-NET) address'),
  v4('203.0.113.0', 24, 'a documentation (TEST-NET) address'),
  v4('224.0.0.0', 4, 'a multicast address'),
  v4('240.0.0.0', 4, 'a reserved or broadcast address'),
];

const v6 = (text: string, prefix: number, reason: string): Range => ({
  bytes: parseIpv6(text)!,
  prefix,
  reason,
});

const IPV6_REFUSED: Range[] = [
  v6('::', 128, 'an unspecified address'),
  v6('::1', 128, 'a loopback address'),
  v6('fe80::', 10, 'a link-local address'),
  v6('fec0::', 10, 'a site-local address'),
  v6('fc00::', 7, 'a unique local (private) address'),
  v6('ff00::', 8, 'a multicast address'),
  v6('100::', 64, 'a discard-only address'),
  v6('2001:db8::', 32, 'a documentation address'),
  v6('3fff::', 20, 'a documentation address'),
  // Tunnels that carry an IPv4 address inside (deprecated; the IPv4 address could be any of the above).
  v6('2001::', 32, 'a Teredo tunnel address'),
  v6('2002::', 16, 'a 6to4 tunnel address'),
  // Local-use IPv4/IPv6 translation (RFC 8215): the IPv4 address may sit anywhere inside.
  v6('64:ff9b:1::', 48, 'a local-use NAT64 address'),
];

/** IPv6 prefixes that carry an IPv4 address in their last 32 bits: the IPv4 address decides. */
const IPV4_EMBEDDING: Range[] = [
  v6('::ffff:0:0', 96, 'IPv4-mapped'),
  v6('::ffff:0:0:0', 96, 'IPv4-translated'),
  v6('::', 96, 'IPv4-compatible'),
  v6('64:ff9b::', 96, 'NAT64'),
];

function inRange(bytes: number[], range: Range): boolean {
  if (bytes.length !== range.bytes.length) return false;
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i] & mask) !== (range.bytes[i] & mask)) return false;
  }
  return true;
}

/**
 * An IPv4 address in any spelling `inet_aton` accepts: 1 to 4 parts, each decimal, octal
 * (leading 0) or hex (0x); the last part fills the remaining bytes ("127.1", "2130706433",
 * "0x7f.0.0.1", "0177.0.0.1"). Null when the text is not one.
 */
export function parseIpv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length > 4 || parts.some((p) => p === '')) return null;
  const values: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    else if (/^0[0-7]*$/.test(part)) value = parseInt(part, 8);
    else if (/^[1-9][0-9]*$/.test(part)) value = parseInt(part, 10);
    else return null;
    if (!Number.isSafeInteger(value)) return null;
    values.push(value);
  }
  const last = values.pop()!;
  if (values.some((v) => v > 255)) return null;
  const lastBytes = 4 - values.length;
  if (last >= 2 ** (8 * lastBytes)) return null;
  const bytes = [...values];
  for (let i = lastBytes - 1; i >= 0; i--) bytes.push(Math.floor(last / 2 ** (8 * i)) % 256);
  return bytes;
}

/** An IPv6 address (with `::` and an optional trailing dotted IPv4) as 16 bytes; null when it is not one. */
export function parseIpv6(text: string): number[] | null {
  let address = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (address.includes('%')) address = address.slice(0, address.indexOf('%')); // zone id
  if (isIP(address) !== 6) return null;
  const halves = address.split('::');
  const groups = (half: string): number[] | null => {
    if (half === '') return [];
    const out: number[] = [];
    const pieces = half.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i];
      if (piece.includes('.')) {
        if (i !== pieces.length - 1 || isIP(piece) !== 4) return null;
        const [a, b, c, d] = piece.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return null;
  const zeros = 8 - head.length - tail.length;
  const words = halves.length === 2 ? [...head, ...Array<number>(zeros).fill(0), ...tail] : head;
  if (words.length !== 8) return null;
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

/**
 * Why an IP address may not receive webhooks (loopback, private, link-local, CGNAT,
 * multicast, unique local, …, also inside IPv4-mapped IPv6 forms), or null when it may.
 * Anything that is not an IP address is refused too.
 */
export function refusedAddressReason(address: string): string | null {
  const ipv6 = address.includes(':') ? parseIpv6(address) : null;
  if (ipv6) {
    const embedding = IPV4_EMBEDDING.find((range) => inRange(ipv6, range));
    if (embedding && !inRange(ipv6, IPV6_REFUSED[0]) && !inRange(ipv6, IPV6_REFUSED[1])) {
      const reason = refusedAddressReason(ipv6.slice(12).join('.'));
      return reason ? `${reason} (${embedding.reason})` : null;
    }
    return IPV6_REFUSED.find((range) => inRange(ipv6, range))?.reason ?? null;
  }
  const ipv4 = parseIpv4(address);
  if (!ipv4) return 'not an IP address';
  return IPV4_REFUSED.find((range) => inRange(ipv4, range))?.reason ?? null;
}

export type UrlCheck = { ok: true; url: URL; host: string; isAddress: boolean } | { ok: false; reason: string };

/**
 * The checks a webhook URL passes before any name resolution: a URL, https (http too when
 * private URLs are allowed), no credentials, at most 2,048 characters, and a host that is
 * not a refused address in any spelling. A host name still has to resolve to allowed
 * addresses (checked at registration and again at each delivery).
 */
export function checkWebhookUrlSyntax(raw: string, allowPrivate: boolean): UrlCheck {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH)
    return { ok: false, reason: `it is longer than ${MAX_WEBHOOK_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'it is not a valid URL' };
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return { ok: false, reason: allowPrivate ? 'it must use https or http' : 'it must use https' };
  }
  if (url.username || url.password) return { ok: false, reason: 'it must not contain a user name or password' };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!host) return { ok: false, reason: 'it has no host' };
  // WHATWG URLs already rewrite numeric IPv4 spellings to dotted decimal; parse again to be sure.
  const literal = isIP(host) ? host : parseIpv4(host) ? parseIpv4(host)!.join('.') : null;
  if (literal && !allowPrivate) {
    const reason = refusedAddressReason(literal);
    if (reason) return { ok: false, reason: `it points at ${reason} (${literal})` };
  }
  return { ok: true, url, host: literal ?? host, isAddress: literal !== null };
}

/**
 * Why a URL given for a new or changed endpoint is not written as it is called (null: it is):
 * URL parsing would drop spaces and control characters, take `https:///host` for
 * `https://host`, read a backslash as a slash (`https://a.example\@b.example/` calls
 * a.example, not b.example) and never send a fragment. Checked at registration only: endpoints
 * stored before this rule keep being delivered to.
 */
export function urlFormProblem(raw: string): string | null {
  if (/[\s\p{Cc}]/u.test(raw)) return 'it must not contain spaces or control characters';
  if (raw.includes('\\')) return 'it must not contain a backslash';
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]/i.test(raw)) return 'it must start scheme://host';
  if (raw.includes('#')) return 'it must not have a fragment (#…)';
  try {
    if (new URL(raw).port === '0') return 'its port must be 1 to 65535';
  } catch {
    // not a URL at all: checkWebhookUrlSyntax says so
  }
  return null;
}

/** Why a resolved set of addresses is refused (the first refused one), or null when all are allowed. */
export function refusedResolution(host: string, addresses: string[]): string | null {
  if (addresses.length === 0) return `its host ${host} does not resolve`;
  for (const address of addresses) {
    const reason = refusedAddressReason(address);
    if (reason) return `its host ${host} resolves to ${reason} (${address})`;
  }
  return null;
}
